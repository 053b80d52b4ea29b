import { describe, expect, it } from 'vitest';
import { emptyUsageTotals } from '@baton/context-config';
import { decodeProjectEvent, type ProjectEvent } from '@baton/projects/schema';
import { createLiveView, describeEvent, shouldUseColor } from './live-view.js';

const at = Date.UTC(2026, 0, 1, 12, 0, 0);

type Fields = Record<string, unknown>;

/** Usage counts the fixtures leave out, as the session writes them (all 0). */
const turnUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheWrite5mInputTokens: 0,
  cacheWrite1hInputTokens: 0,
};

/**
 * `fields` laid over the rest of its event in the shape the session writes it (readers assume
 * that shape), so a fixture names only what the view shows.
 */
function written(fields: Fields): Fields {
  switch (fields.type) {
    case 'session-start':
      return { interrupted: false, sandbox: { mode: 'bubblewrap' }, ...fields };
    case 'tool-call':
      return { summary: '', isError: false, durationMs: 0, ...fields };
    case 'checkpoint':
      return { skipped: [], ...fields };
    case 'guidance-delivered':
      return { inFirstMessage: false, ...fields };
    case 'guidance-sent':
      return { runningSessionId: null, ...fields };
    case 'project-paused':
      return { runningSessionId: null, removedJobId: null, ...fields };
    case 'project-status':
      return { reason: null, ...fields };
    case 'session-queued':
      return { delayMs: 0, ...fields };
    case 'turn':
      return {
        model: 'sim',
        responseModel: 'sim',
        phase: 'work',
        durationMs: 0,
        appliedEdits: [],
        clearedInputTokens: 0,
        cacheInvalidation: null,
        costUsd: 0,
        ...fields,
        usage: { ...turnUsage, ...(fields.usage as Fields) },
        totals: { ...emptyUsageTotals(), ...(fields.totals as Fields) },
      };
    case 'session-end': {
      const result = fields.result as Fields;
      return {
        ...fields,
        result: {
          reason: '',
          turns: 0,
          featuresBefore: { passing: 0, total: 0 },
          featuresAfter: { passing: 0, total: 0 },
          allFeaturesPass: false,
          flippedFeatures: [],
          startedAt: at,
          endedAt: at,
          commits: [],
          progressEntry: 'agent',
          ...result,
          usage: { ...emptyUsageTotals(), ...(result.usage as Fields) },
        },
      };
    }
    default:
      return fields;
  }
}

/** An event as a reader gets it: decoded, failing loudly if it does not decode. */
function decoded(fields: Fields): ProjectEvent {
  const event = decodeProjectEvent({
    v: 1,
    at,
    projectId: 'p',
    sessionId: 's1',
    ...written(fields),
  });
  if (event.type === 'unknown') throw new Error(`fixture does not decode: ${event.problem}`);
  return event;
}

const events: ProjectEvent[] = [
  { type: 'session-start', sessionNumber: 2, kind: 'resume', model: 'sim', interrupted: true },
  {
    type: 'turn',
    turn: 1,
    phase: 'work',
    stopReason: 'tool_use',
    usage: { inputTokens: 2000, outputTokens: 100 },
    clearedInputTokens: 1500,
    totals: { inputTokens: 2000, outputTokens: 100, costUsd: 0.5 },
  },
  { type: 'tool-call', turn: 1, tool: 'bash', summary: 'npm test', isError: false },
  {
    type: 'tool-call',
    turn: 1,
    tool: 'str_replace_based_edit_tool',
    summary: 'create a.js',
    isError: true,
  },
  {
    type: 'session-end',
    result: {
      sessionId: 's1',
      kind: 'resume',
      outcome: 'completed',
      turns: 1,
      usage: { inputTokens: 2000, outputTokens: 100, costUsd: 0.5 },
      featuresAfter: { passing: 3, total: 4 },
      flippedFeatures: ['F3'],
      reason: 'done',
    },
  },
].map(decoded);

function collect(options: { color?: boolean; statusLine?: boolean } = {}) {
  let text = '';
  const view = createLiveView({ write: (chunk) => (text += chunk), timestamps: false, ...options });
  return { view, text: () => text };
}

describe('live view', () => {
  it('counts cache reads and writes as input and shows the share read from the cache', () => {
    const { view, text } = collect({ statusLine: false });
    view.onEvent(
      decoded({
        type: 'turn',
        turn: 2,
        phase: 'work',
        stopReason: 'tool_use',
        usage: {
          inputTokens: 10,
          cacheReadInputTokens: 9000,
          cacheCreationInputTokens: 990,
          outputTokens: 50,
        },
        clearedInputTokens: 0,
        totals: {
          inputTokens: 20,
          cacheReadInputTokens: 9000,
          cacheCreationInputTokens: 2980,
          outputTokens: 90,
          costUsd: 0.02,
        },
      }),
    );
    expect(text()).toContain('in 10.0k (90% cached) out 50');
    expect(view.state()).toMatchObject({ inputTokens: 12_000, cacheReadInputTokens: 9000 });
    expect(view.statusText()).toContain('in 12.0k (75% cached) out 90 · $0.0200');
  });

  it('colours only on a TTY without NO_COLOR or TERM=dumb', () => {
    expect(shouldUseColor({ isTTY: true }, {})).toBe(true);
    expect(shouldUseColor({ isTTY: false }, {})).toBe(false);
    expect(shouldUseColor({}, {})).toBe(false);
    expect(shouldUseColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(shouldUseColor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    // FORCE_COLOR decides first, as in Node: any value but 0/false forces colours into a pipe.
    expect(shouldUseColor({ isTTY: false }, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
    expect(shouldUseColor({ isTTY: false }, { FORCE_COLOR: '' })).toBe(true);
    expect(shouldUseColor({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
    expect(shouldUseColor({ isTTY: true }, { FORCE_COLOR: 'false' })).toBe(false);
  });

  it('plain output has one line per event, no escape codes, and a status line after a session ends', () => {
    const { view, text } = collect();
    for (const event of events) view.onEvent(event);
    expect(text()).not.toContain('\u001b');
    expect(text().trimEnd().split('\n')).toEqual([
      '● session 2 (resume) · model sim · previous session was interrupted',
      '  turn 1 · tool_use · in 2.0k out 100 · cleared 1.5k · $0.5000',
      '    › bash npm test',
      '    ✗ editor create a.js',
      '✓ completed · flipped F3 · features [████████░░] 3/4 · 1 turns · in 2.0k out 100 · $0.5000',
      'session 2 (resume) turn 1 · features [████████░░] 3/4 · in 2.0k out 100 · $0.5000 · last: bash npm test, editor create a.js',
    ]);
  });

  it('sums tokens and USD across sessions and keeps only the last tool calls', () => {
    const { view } = collect();
    for (const event of [...events, ...events]) view.onEvent(event);
    view.onEvent(
      decoded({
        type: 'tool-call',
        turn: 2,
        tool: 'memory',
        summary: 'view /memories',
        isError: false,
      }),
    );
    view.onEvent(
      decoded({
        type: 'tool-call',
        turn: 2,
        tool: 'memory',
        summary: 'view /memories/progress.md',
        isError: false,
      }),
    );
    const state = view.state();
    expect(state.inputTokens).toBe(4000);
    expect(state.costUsd).toBeCloseTo(1);
    expect(state.recentToolCalls).toEqual([
      'editor create a.js',
      'memory view /memories',
      'memory view /memories/progress.md',
    ]);
  });

  it('on a TTY redraws the status line in place under the event lines, and close() clears it', () => {
    const { view, text } = collect({ color: true, statusLine: true });
    view.onEvent(events[0]!);
    view.onEvent(events[1]!);
    expect(text()).toContain('\r\u001b[2K');
    expect(text()).toContain('\u001b[1msession 2 (resume) turn 1');
    view.close();
    expect(text().endsWith('\r\u001b[2K')).toBe(true);
  });

  it('cuts the in-place status line to the terminal width so it can be redrawn', () => {
    let text = '';
    const view = createLiveView({
      write: (chunk) => (text += chunk),
      statusLine: true,
      columns: 40,
      timestamps: false,
    });
    for (const event of events) view.onEvent(event);
    const status = text.split('\n').at(-1) ?? '';
    expect([...status].length).toBe(39);
    expect(status.endsWith('…')).toBe(true);
  });

  it('describes worker events and unknown events readably', () => {
    expect(
      describeEvent(
        decoded({ type: 'project-status', from: 'running', to: 'paused', reason: 'budget' }),
      ),
    ).toBe('◆ project running → paused (budget)');
    expect(
      describeEvent(
        decoded({
          type: 'session-queued',
          sessionNumber: 3,
          jobId: 'p:3',
          reason: 'chain',
          delayMs: 1500,
        }),
      ),
    ).toBe('  session 3 queued (chain, in 1.5 s)');
    const session = { sessionId: 's1' };
    expect(
      describeEvent(
        decoded({
          ...session,
          type: 'checkpoint',
          reason: 'end',
          commit: 'a'.repeat(40),
          head: 'a'.repeat(40),
          pushed: true,
          hooks: 'passed',
          skipped: ['.env'],
        }),
      ),
    ).toBe(
      '  checkpoint (end) · committed aaaaaaaaaaaa · pushed aaaaaaaaaaaa · hooks passed · left out as secrets: .env',
    );
    expect(
      describeEvent(
        decoded({
          ...session,
          type: 'checkpoint',
          reason: 'turn',
          commit: null,
          head: 'b'.repeat(40),
          pushed: false,
          hooks: 'none',
          skipped: [],
          error: 'remote unreachable',
        }),
      ),
    ).toBe('  checkpoint (turn) · nothing new to commit · not pushed: remote unreachable');
    // A push that took the branch back from a replaced session's late push warns, naming where
    // the stale commits are kept.
    expect(
      describeEvent(
        decoded({
          ...session,
          type: 'checkpoint',
          reason: 'turn',
          commit: 'c'.repeat(40),
          head: 'c'.repeat(40),
          pushed: true,
          hooks: 'none',
          skipped: [],
          replacedStale: {
            tip: 'd'.repeat(40),
            fence: 41,
            commits: 2,
            keptOn: 'baton-kept/p/41-dddddddddddd',
          },
        }),
      ),
    ).toBe(
      '  checkpoint (turn) · committed cccccccccccc · pushed cccccccccccc\n' +
        "  ⚠ the branch held a late push of a replaced session (fence 41, 2 commits, dddddddddddd): kept on the branch baton-kept/p/41-dddddddddddd, replaced by this session's checkpoint; merge what you need from it, then delete it",
    );
    // A checkpoint that committed nothing because it failed is not "nothing new to commit".
    expect(
      describeEvent(
        decoded({
          ...session,
          type: 'checkpoint',
          reason: 'turn',
          commit: null,
          head: null,
          pushed: false,
          hooks: 'none',
          skipped: [],
          error: "git add: 'tools/helper/' does not have a commit checked out",
        }),
      ),
    ).toBe(
      "  checkpoint (turn) failed: git add: 'tools/helper/' does not have a commit checked out · the work is not saved yet; retried at the next checkpoint",
    );
    expect(
      describeEvent(
        decoded({
          ...session,
          type: 'checkpoint',
          reason: 'end',
          commit: 'a'.repeat(40),
          head: 'a'.repeat(40),
          pushed: true,
          hooks: 'none',
          skipped: Array.from({ length: 30_000 }, (_, index) => `k${index}.asc`),
        }),
      ),
    ).toBe(
      '  checkpoint (end) · committed aaaaaaaaaaaa · pushed aaaaaaaaaaaa · left out as secrets: k0.asc, k1.asc, k2.asc, k3.asc, k4.asc and 29995 more',
    );
    expect(
      describeEvent(
        decoded({
          type: 'guidance-sent',
          guidanceId: 'g1',
          text: 'use pnpm',
          runningSessionId: null,
        }),
      ),
    ).toBe('  ✉ operator guidance queued: use pnpm');
    expect(
      describeEvent(
        decoded({
          ...session,
          type: 'guidance-delivered',
          guidanceIds: ['g1'],
          turn: 3,
          inFirstMessage: false,
        }),
      ),
    ).toBe('  ✉ guidance delivered to the model with turn 3');
    expect(
      describeEvent(
        decoded({
          type: 'project-paused',
          by: 'operator',
          runningSessionId: 's1',
          removedJobId: null,
        }),
      ),
    ).toBe('◆ paused by the operator: the running session ends after its end-of-session turn');
    expect(
      describeEvent(
        decoded({
          type: 'webhook-delivery',
          notificationId: 'n1',
          webhookType: 'project.completed',
          target: 'https://hooks.example',
          ok: false,
          attempts: 2,
          error: 'status 500',
        }),
      ),
    ).toBe(
      '  webhook project.completed → https://hooks.example: failed (status 500) after 2 attempts',
    );
    expect(describeEvent(decodeProjectEvent({ type: 'something-new', at, v: 1, detail: 7 }))).toBe(
      '  ? unknown event type something-new {"detail":7}',
    );
  });
});
