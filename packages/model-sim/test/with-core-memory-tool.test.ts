import type Anthropic from '@anthropic-ai/sdk';
import { MemoryToolError, createInMemoryStore, createMemoryTool } from '@baton/core';
import type { MemoryTool } from '@baton/core';
import { describe, expect, it } from 'vitest';
import type { WorkspaceTools } from './support/workspace-tools.js';
import { useSimSession } from './support/sim-session-fixture.js';
import { driveSession, sessionPrompt } from './support/drive-session.js';

// The same conversations as scripted-agent.test.ts, against @baton/core's real memory handler:
// the agent must read its exact view output and satisfy its str_replace/insert rules.
const GOAL = 'A tiny todo app.\n- Add a todo\n- List todos\n- Mark a todo as done';

let client: Anthropic;
let workspace: WorkspaceTools;
useSimSession((fixture) => ({ client, workspace } = fixture), {
  tempPrefix: 'baton-sim-core-',
});

function adapter(tool: MemoryTool) {
  return {
    execute: (input: unknown) =>
      tool.execute(input).then((result) => ({ content: result.content, isError: result.isError })),
  };
}

async function read(tool: MemoryTool, file: string): Promise<string> {
  const result = await tool.execute({ command: 'view', path: file });
  expect(result.isError).toBe(false);
  return result.content;
}

describe('the scripted agent against @baton/core createMemoryTool', () => {
  it('init -> resume x3 (the second with an end-of-session prompt) -> every feature passes, without a tool error', async () => {
    const store = createInMemoryStore();
    const tool = createMemoryTool({ store });
    const memory = adapter(tool);
    const runs = [
      await driveSession({
        client,
        memory,
        workspace,
        prompt: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }),
      }),
      await driveSession({
        client,
        memory,
        workspace,
        prompt: sessionPrompt({ kind: 'resume', session: 2, goal: GOAL }),
        stream: true,
      }),
      await driveSession({
        client,
        memory,
        workspace,
        prompt: sessionPrompt({ kind: 'resume', session: 3, goal: GOAL }),
        endOfSession: '<baton_end_of_session reason="done">',
      }),
      await driveSession({
        client,
        memory,
        workspace,
        prompt: sessionPrompt({ kind: 'resume', session: 4, goal: GOAL }),
      }),
    ];
    expect(runs.flatMap((run) => run.toolCalls).filter((call) => call.isError)).toEqual([]);
    const features = await read(tool, '/memories/features.json');
    expect(features.match(/"passes": true/g)).toHaveLength(3);
    const progress = await read(tool, '/memories/progress.md');
    for (const heading of [
      '## Session 1 (init)',
      '## Session 2',
      '## Session 3',
      '## Session 3 end (done)',
      '## Session 4',
    ]) {
      expect(progress).toContain(heading);
    }
  });

  it('a beforeWrite refusal of the flip reaches the agent, which re-reads and retries once', async () => {
    const store = createInMemoryStore();
    let refusals = 1;
    const tool = createMemoryTool({
      store,
      hooks: {
        beforeWrite: (write) => {
          if (
            write.path === '/memories/features.json' &&
            write.command === 'str_replace' &&
            refusals > 0
          ) {
            refusals -= 1;
            throw new MemoryToolError('The checklist is being reviewed; try again.');
          }
          return undefined;
        },
      },
    });
    const memory = adapter(tool);
    await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }),
    });
    const run = await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'resume', session: 2, goal: GOAL }),
    });
    const flips = run.toolCalls.filter((call) => call.input['command'] === 'str_replace');
    expect(flips.map((call) => call.isError)).toEqual([true, false]);
    expect(flips[0]?.content).toContain('The checklist is being reviewed');
    expect((await read(tool, '/memories/features.json')).match(/"passes": true/g)).toHaveLength(1);
  });
});
