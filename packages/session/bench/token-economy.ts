/**
 * The token-economy scenario shared by test/context-preset-saves-tokens.test.ts and
 * bench/context.bench.ts: one 100-turn session whose agent (a script on @baton/model-sim) runs a
 * command with a large output every turn, as a coding agent re-running tests does. The simulator
 * applies `context_management` like the API, bills prompt caching like the API, and reports input
 * tokens after clearing.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { defineContextConfig, type ContextPresetName } from '@baton/context-config';
import { createInMemoryStore } from '@baton/core';
import { startModelSim, type SimScriptRequest, type SimScriptResult } from '@baton/model-sim';
import { runSession, type SessionResult } from '../src/index.js';

export interface EconomyRun {
  preset: ContextPresetName;
  /** Whether requests carried cache breakpoints. */
  promptCache: boolean;
  result: SessionResult;
  /** Turns whose response reported applied context edits. */
  turnsWithEdits: number;
}

/** Lines of the file the scripted agent prints every turn (about 1,500 tokens of output). */
const OUTPUT_LINES = 200;

function assistantTurns(request: SimScriptRequest): number {
  return request.params.messages.filter((message) => message.role === 'assistant').length;
}

function isEndOfSession(request: SimScriptRequest): boolean {
  const last = request.params.messages[request.params.messages.length - 1];
  const content = last?.content;
  const text = typeof content === 'string' ? content : JSON.stringify(content ?? []);
  return text.includes('<baton_end_of_session');
}

/** The scripted agent: `turns - 1` bash calls, then it ends its turn. */
function scriptedAgent(turns: number) {
  return (request: SimScriptRequest): SimScriptResult => {
    if (isEndOfSession(request)) return { content: [{ type: 'text', text: 'Progress noted.' }] };
    const turn = assistantTurns(request) + 1;
    if (turn >= turns) return { content: [{ type: 'text', text: 'All checks run.' }] };
    return {
      content: [
        { type: 'text', text: `Run ${turn}: running the test suite again.` },
        { type: 'tool_use', name: 'bash', input: { command: 'cat test-output.txt' } },
      ],
    };
  };
}

/** Run the same scripted session once with `preset`. */
export async function runEconomySession(
  preset: ContextPresetName,
  turns = 100,
  options: { promptCache?: boolean } = {},
): Promise<EconomyRun> {
  const promptCache = options.promptCache ?? true;
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-economy-')));
  const sim = await startModelSim({ script: scriptedAgent(turns) });
  try {
    const workspace = path.join(dir, 'workspace');
    await mkdir(workspace);
    const line = (index: number) =>
      `test ${String(index).padStart(3, '0')} ... ok (${'.'.repeat(12)})`;
    await writeFile(
      path.join(workspace, 'test-output.txt'),
      Array.from({ length: OUTPUT_LINES }, (_, index) => line(index)).join('\n'),
    );
    let turnsWithEdits = 0;
    const result = await runSession({
      project: { id: 'economy', goal: 'Keep the tests green.' },
      kind: 'resume',
      store: createInMemoryStore(),
      workspace,
      client: new Anthropic({ apiKey: 'bench', baseURL: sim.url, maxRetries: 0 }),
      model: 'sim-sonnet',
      context: defineContextConfig({ preset, ...(promptCache ? {} : { promptCache: false }) }),
      onEvent: (event) => {
        if (event.type === 'turn' && event.appliedEdits.length > 0) turnsWithEdits += 1;
      },
    });
    return { preset, promptCache, result, turnsWithEdits };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
