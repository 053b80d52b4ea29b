import type Anthropic from '@anthropic-ai/sdk';
import { createInMemoryStore, createMemoryTool } from '@baton/core';
import type { MemoryTool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import type { WorkspaceTools } from './support/workspace-tools.js';
import { useSimSession } from './support/sim-session-fixture.js';
import { driveSession, sessionPrompt } from './support/drive-session.js';

// A project far larger than one memory view (16,000 characters), against @baton/core's real
// handler: the agent must write the checklist in parts, page through cut views with view_range
// and never send the same view over and over.
const FEATURES = 150;
const GOAL = [
  'A long project.',
  ...Array.from({ length: FEATURES }, (_, index) => `- Greeting case ${index + 1} prints its line`),
].join('\n');

let client: Anthropic;
let workspace: WorkspaceTools;
useSimSession((fixture) => ({ client, workspace } = fixture), { tempPrefix: 'baton-sim-long-' });

function adapter(tool: MemoryTool) {
  return {
    execute: (input: unknown) =>
      tool.execute(input).then((result) => ({ content: result.content, isError: result.isError })),
  };
}

function viewsOf(calls: Array<{ input: Record<string, unknown> }>): string[] {
  return calls
    .filter((call) => call.input['command'] === 'view')
    .map((call) => JSON.stringify([call.input['path'], call.input['view_range'] ?? null]));
}

describe('the scripted agent on a project larger than one view', () => {
  it('writes a 150-feature checklist in parts, pages through it and the log, flips one feature per session', async () => {
    const store = createInMemoryStore();
    const tool = createMemoryTool({ store });
    const memory = adapter(tool);
    const init = await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }),
    });
    expect(init.toolCalls.filter((call) => call.isError)).toEqual([]);
    const checklist = JSON.parse((await store.read('features.json')) ?? '[]') as unknown[];
    expect(checklist).toHaveLength(FEATURES);
    expect((await store.read('features.json'))!.length).toBeGreaterThan(16_000);

    // A log over one view too, so the append has to page through it.
    const long = Array.from(
      { length: 300 },
      (_, index) => `- old note ${index + 1} ${'x'.repeat(60)}`,
    );
    await store.edit(
      'progress.md',
      (current) => `${current}\n## Session 0 notes\n${long.join('\n')}\n`,
    );

    for (const session of [2, 3]) {
      const run = await driveSession({
        client,
        memory,
        workspace,
        prompt: sessionPrompt({ kind: 'resume', session, goal: GOAL }),
        endOfSession: '<baton_end_of_session reason="done">',
      });
      expect(run.toolCalls.filter((call) => call.isError)).toEqual([]);
      const views = viewsOf(run.toolCalls);
      expect(views.some((view) => view.includes('features.json",['))).toBe(true);
      // A view (file and range) goes out at most once per phase (work, then end of session).
      const counts = new Map<string, number>();
      for (const view of views) counts.set(view, (counts.get(view) ?? 0) + 1);
      expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
      expect(run.responses.length).toBeLessThan(30);
    }
    const after = JSON.parse((await store.read('features.json')) ?? '[]') as Array<{
      id: string;
      passes: boolean;
    }>;
    expect(after.filter((feature) => feature.passes).map((feature) => feature.id)).toEqual([
      'F1',
      'F2',
    ]);
    const progress = (await store.read('progress.md')) ?? '';
    expect(progress).toContain('## Session 2\n- Worked on F1');
    expect(progress).toContain('## Session 3 end (done)');
  });
});
