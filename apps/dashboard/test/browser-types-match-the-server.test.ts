/**
 * The browser modules (public/js) are type-checked against hand-written shapes of what the API
 * sends (public/js/api-types.js): they cannot import the server's types without pulling Node's
 * into the browser's check. This file holds the two together. Each line says "what the server
 * builds is assignable to what the browser expects", so `pnpm typecheck` fails when the server
 * renames, drops or retypes a field the browser reads. The answers' envelopes are checked where
 * they are built (`satisfies Browser.X` in src/internal). The checks are compile-time; the test
 * body only makes vitest count the file.
 */
import { describe, expectTypeOf, test } from 'vitest';
import type {
  EventEntry,
  ProjectChecksReport,
  ProjectEvent,
  ProjectProblems,
  SessionSummary,
  StatusTransition,
  WebhookDeliveryRecord,
} from '@baton/projects';
import type { SearchResult, Transcript } from '@baton/session';
import type { ProjectBranchDiff } from '@baton/workspace';
import type { CONTEXT_PRESETS, DEFAULT_CONTEXT_PRESET } from '@baton/context-config';
import type { DashboardControl, DashboardMemoryStore } from '../src/control.js';
import type { LineDiff } from '../src/internal/diff.js';
import type { ChecklistView, ProjectView, TurnPoint } from '../src/internal/views.js';
import type * as Browser from '../public/js/api-types.js';

type Answer<Method extends keyof DashboardControl> = Awaited<
  ReturnType<Extract<DashboardControl[Method], (...args: never[]) => unknown>>
>;

describe('the browser types match what the server sends', () => {
  test('projects, sessions and their history', () => {
    expectTypeOf<ProjectView>().toExtend<Browser.ProjectView>();
    expectTypeOf<SessionSummary>().toExtend<Browser.SessionSummary>();
    expectTypeOf<StatusTransition>().toExtend<Browser.StatusTransition>();
    expectTypeOf<WebhookDeliveryRecord>().toExtend<Browser.WebhookDelivery>();
    expectTypeOf<Answer<'pageSessions'>['sessions']>().toExtend<Browser.SessionSummary[]>();
    expectTypeOf<Answer<'listTransitions'>>().toExtend<Browser.StatusTransition[]>();
    expectTypeOf<Answer<'listWebhookDeliveries'>>().toExtend<Browser.WebhookDelivery[]>();
    expectTypeOf<Answer<'countProjects'>['counts']>().toExtend<Browser.ProjectsPage['counts']>();
    expectTypeOf<Answer<'pageProjects'>['nextCursor']>().toExtend<
      Browser.ProjectsPage['nextCursor']
    >();
    expectTypeOf<Answer<'queueCounts'>>().toExtend<Browser.QueueCounts>();
    expectTypeOf<Answer<'findProblems'>>().toExtend<Browser.ProjectProblems>();
    expectTypeOf<ProjectProblems>().toExtend<Browser.ProjectProblems>();
  });

  test('events and the token chart', () => {
    expectTypeOf<ProjectEvent>().toExtend<Browser.ProjectEvent>();
    expectTypeOf<EventEntry>().toExtend<Browser.EventEntry>();
    expectTypeOf<Answer<'readEvents'>>().toExtend<Browser.EventEntry[]>();
    expectTypeOf<TurnPoint>().toExtend<Browser.TurnPoint>();
    // The browser's event union names every type the server has: none falls through unseen.
    expectTypeOf<Browser.ProjectEvent['type']>().toEqualTypeOf<ProjectEvent['type']>();
  });

  test('checklist, checks, memory, search, transcripts and the branch diff', () => {
    expectTypeOf<ChecklistView>().toExtend<Browser.ChecklistView>();
    expectTypeOf<ProjectChecksReport>().toExtend<Browser.CheckReport>();
    expectTypeOf<Answer<'memoryHistory'>>().toExtend<Browser.MemoryVersion[]>();
    // The memory list's path is the entry's, turned into a `/memories/...` string.
    expectTypeOf<
      Pick<Awaited<ReturnType<DashboardMemoryStore['list']>>[number], 'kind' | 'size'>
    >().toExtend<Omit<Browser.MemoryList['files'][number], 'path'>>();
    expectTypeOf<{ diff: LineDiff }>().toExtend<Pick<Browser.MemoryDiff, 'diff'>>();
    expectTypeOf<SearchResult['hits']>().toExtend<Browser.SearchHit[]>();
    expectTypeOf<Transcript>().toExtend<Browser.Transcript>();
    expectTypeOf<{
      name: keyof typeof CONTEXT_PRESETS;
      intent: (typeof CONTEXT_PRESETS)[keyof typeof CONTEXT_PRESETS]['intent'];
    }>().toExtend<Browser.Presets['presets'][number]>();
    expectTypeOf<typeof DEFAULT_CONTEXT_PRESET>().toExtend<Browser.Presets['default']>();
    expectTypeOf<ProjectBranchDiff>().toExtend<
      Omit<Browser.BranchDiff, 'base' | 'baseCommit' | 'truncated'>
    >();
  });
});
