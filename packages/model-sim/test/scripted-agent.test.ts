import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { startModelSim } from '../src/index.js';
import type { ModelSim } from '../src/index.js';
import type { MemoryStandIn } from './support/memory-stand-in.js';
import type { WorkspaceTools } from './support/workspace-tools.js';
import { useSimSession } from './support/sim-session-fixture.js';
import { driveSession, sessionPrompt } from './support/drive-session.js';

const GOAL = [
  'Build a tiny greeting CLI.',
  '- Print a greeting',
  '- Accept a name argument',
  "- Show the tool's version",
].join('\n');

let sim: ModelSim;
let client: Anthropic;
let memory: MemoryStandIn;
let workspace: WorkspaceTools;
let root: string;
useSimSession((fixture) => ({ sim, client, memory, workspace, root } = fixture), {
  tempPrefix: 'baton-sim-',
});

interface FeatureEntry {
  id: string;
  description: string;
  steps: string[];
  passes: boolean;
}

function features(): FeatureEntry[] {
  return JSON.parse(memory.files.get('/memories/features.json') ?? 'null') as FeatureEntry[];
}

function passing(): string[] {
  return features()
    .filter((feature) => feature.passes)
    .map((feature) => feature.id);
}

async function init() {
  return driveSession({
    client,
    memory,
    workspace,
    prompt: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }),
  });
}

async function resume(session: number, options: { stream?: boolean; endOfSession?: string } = {}) {
  return driveSession({
    client,
    memory,
    workspace,
    prompt: sessionPrompt({ kind: 'resume', session, goal: GOAL }),
    ...options,
  });
}

describe('the scripted coding agent', () => {
  it('init writes features.json from the goal bullets, progress.md, startup.md and init.sh, then ends its turn', async () => {
    const result = await init();
    expect(result.toolCalls[0]).toMatchObject({
      name: 'memory',
      input: { command: 'view', path: '/memories' },
    });
    expect(features()).toEqual([
      {
        id: 'F1',
        description: 'Print a greeting',
        steps: expect.any(Array) as unknown,
        check: `sh features/f1.sh | grep -q 'F1 ok'`,
        passes: false,
      },
      {
        id: 'F2',
        description: 'Accept a name argument',
        steps: expect.any(Array) as unknown,
        check: `sh features/f2.sh | grep -q 'F2 ok'`,
        passes: false,
      },
      {
        id: 'F3',
        description: "Show the tool's version",
        steps: expect.any(Array) as unknown,
        check: `sh features/f3.sh | grep -q 'F3 ok'`,
        passes: false,
      },
    ]);
    expect(memory.files.get('/memories/progress.md')).toContain('## Session 1 (init)');
    expect(memory.files.get('/memories/startup.md')).toContain('init.sh');
    expect(await readFile(path.join(root, 'init.sh'), 'utf8')).toContain('features/*.sh');
    expect(result.responses.at(-1)?.stop_reason).toBe('end_turn');
    expect(result.finalText).toMatch(/3 features/);
    expect(result.toolCalls.every((call) => !call.isError)).toBe(true);
  });

  it('runs init -> resume -> resume (+ end-of-session) -> resume -> all pass, one feature per session', async () => {
    await init();

    const first = await resume(2, { stream: true });
    expect(passing()).toEqual(['F1']);
    const flip = first.toolCalls.find((call) => call.input['command'] === 'str_replace');
    expect(flip?.input['path']).toBe('/memories/features.json');
    // One feature per line: the flip names the whole entry and changes only that line.
    expect(String(flip?.input['old_str'])).not.toContain('\n');
    expect(String(flip?.input['old_str'])).toMatch(/^"id": "F1", .*"passes": false$/);
    expect(
      first.toolCalls.some((call) => call.name === 'bash' && call.content.includes('F1 ok')),
    ).toBe(true);
    expect(await readFile(path.join(root, 'features/f1.sh'), 'utf8')).toContain('F1 ok');
    expect(memory.files.get('/memories/progress.md')).toMatch(
      /## Session 2\n- Worked on F1: Print a greeting/,
    );
    // The first reads run as parallel tool calls in one turn.
    expect(first.responses[1]?.content.filter((block) => block.type === 'tool_use')).toHaveLength(
      3,
    );

    const second = await resume(3, {
      endOfSession: '<baton_end_of_session reason="done">\nUpdate the progress log, then stop.',
    });
    expect(passing()).toEqual(['F1', 'F2']);
    const progress = memory.files.get('/memories/progress.md') ?? '';
    expect(progress).toContain('## Session 3\n');
    expect(progress).toContain('## Session 3 end (done)');
    expect(progress).toContain('- Finished: F2.');
    expect(progress).toContain('- Next: F3');
    expect(second.finalText).toMatch(/Session 3 end/);

    await resume(4);
    expect(passing()).toEqual(['F1', 'F2', 'F3']);

    const last = await resume(5);
    expect(last.finalText).toMatch(/All 3 features pass/);
    expect(last.toolCalls.every((call) => call.input['command'] === 'view')).toBe(true);
    // Ids, descriptions and steps never changed.
    expect(features().map((feature) => feature.description)).toEqual([
      'Print a greeting',
      'Accept a name argument',
      "Show the tool's version",
    ]);
    expect(sim.received.every((entry) => entry.status === 200)).toBe(true);
    expect(
      sim.received.every(
        (entry) => (entry.inputTokensAfter ?? 0) > 0 && (entry.outputTokens ?? 0) > 0,
      ),
    ).toBe(true);
  });

  it('a standalone end session appends a "Session N end" entry', async () => {
    await init();
    const result = await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'end', session: 2 }),
    });
    expect(memory.files.get('/memories/progress.md')).toContain('## Session 2 end (end_session)');
    expect(memory.files.get('/memories/progress.md')).toContain('- Next: F1 (Print a greeting)');
    expect(result.responses.at(-1)?.stop_reason).toBe('end_turn');
  });

  it('re-views and retries once when the flip is refused, then succeeds', async () => {
    await init();
    memory.refuseWrites(
      '/memories/features.json',
      'Refused: features.json may only change `passes`.',
    );
    const result = await resume(2);
    const flips = result.toolCalls.filter((call) => call.input['command'] === 'str_replace');
    expect(flips.map((call) => call.isError)).toEqual([true, false]);
    const viewsOfFeatures = result.toolCalls.filter(
      (call) =>
        call.input['command'] === 'view' && call.input['path'] === '/memories/features.json',
    );
    expect(viewsOfFeatures).toHaveLength(2);
    expect(passing()).toEqual(['F1']);
  });

  it('ends the turn explaining when the flip is refused twice', async () => {
    await init();
    memory.refuseWrites('/memories/features.json', 'Refused: the checklist is locked.', 2);
    const result = await resume(2);
    expect(result.finalText).toMatch(
      /could not mark F1 as passing: Refused: the checklist is locked/,
    );
    expect(passing()).toEqual([]);
  });

  it('does not flip a feature whose check fails twice', async () => {
    await init();
    workspace.failNextCommands('sh: 1: syntax error', 2);
    const result = await resume(2);
    expect(result.finalText).toMatch(/check of F1 failed twice/);
    expect(passing()).toEqual([]);
    expect(workspace.commands).toEqual(['sh features/f1.sh', 'sh features/f1.sh']);
  });

  it('re-creates a missing features.json from the goal on resume, then works on F1', async () => {
    await init();
    memory.files.delete('/memories/features.json');
    const result = await resume(2);
    expect(
      result.toolCalls.some(
        (call) =>
          call.input['command'] === 'create' && call.input['path'] === '/memories/features.json',
      ),
    ).toBe(true);
    expect(passing()).toEqual(['F1']);
  });

  it('re-creates a missing progress.md when appending', async () => {
    await init();
    memory.files.delete('/memories/progress.md');
    await resume(2);
    expect(memory.files.get('/memories/progress.md')).toMatch(/^# Progress log\n\n## Session 2/);
  });

  it('re-creates a missing startup.md on resume', async () => {
    await init();
    memory.files.delete('/memories/startup.md');
    await resume(2);
    expect(memory.files.get('/memories/startup.md')).toContain('init.sh');
    expect(passing()).toEqual(['F1']);
  });

  it('an end-of-session prompt mid-work records the half-done feature and flips nothing', async () => {
    await init();
    const result = await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'resume', session: 2, goal: GOAL }),
      endOfSession: '<baton_end_of_session reason="max_turns">',
      endAfterResponses: 3,
    });
    expect(passing()).toEqual([]);
    const progress = memory.files.get('/memories/progress.md') ?? '';
    expect(progress).toContain('## Session 2 end (max_turns)');
    expect(progress).toContain('- Half done: F1');
    expect(progress).toContain('- Next: F1 (Print a greeting)');
    expect(result.responses.at(-1)?.stop_reason).toBe('end_turn');
  });

  it('explains and stops when features.json is missing and the prompt has no goal', async () => {
    const result = await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'resume', session: 2 }),
    });
    expect(result.finalText).toMatch(/features\.json is missing/);
  });

  it('explains and stops when the memory tool is not offered', async () => {
    const result = await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }),
      tools: [],
    });
    expect(result.finalText).toMatch(/memory/);
    expect(result.toolCalls).toEqual([]);
  });

  it('takes an existing feature script as written when the editor will not overwrite it', async () => {
    await init();
    const editor = workspace.editor.bind(workspace);
    workspace.editor = async (input) => {
      const outcome = await editor(input);
      const file = String((input as { path?: unknown }).path);
      return file.startsWith('features/')
        ? { content: `Error: File ${file} already exists`, isError: true }
        : outcome;
    };
    await mkdir(path.join(root, 'features'), { recursive: true });
    await writeFile(path.join(root, 'features/f1.sh'), "echo 'F1 ok: from an earlier session'\n");
    const result = await resume(2);
    expect(
      result.toolCalls.filter((call) => call.name === 'str_replace_based_edit_tool'),
    ).toHaveLength(1);
    expect(passing()).toEqual(['F1']);
  });

  it('reads one file per turn with parallelToolCalls: false and still completes the feature', async () => {
    await init();
    const serial = await startModelSim({ parallelToolCalls: false });
    try {
      const serialClient = new Anthropic({ apiKey: 'test', baseURL: serial.url, maxRetries: 0 });
      const result = await driveSession({
        client: serialClient,
        memory,
        workspace,
        prompt: sessionPrompt({ kind: 'resume', session: 2, goal: GOAL }),
      });
      expect(
        result.responses.every(
          (response) => response.content.filter((block) => block.type === 'tool_use').length <= 1,
        ),
      ).toBe(true);
      expect(passing()).toEqual(['F1']);
    } finally {
      await serial.close();
    }
  });

  it('checks the workspace with git status after an interrupted session', async () => {
    await init();
    await driveSession({
      client,
      memory,
      workspace,
      prompt: sessionPrompt({ kind: 'resume', session: 2, goal: GOAL, interrupted: true }),
    });
    expect(workspace.commands[0]).toBe('git status --short');
    expect(passing()).toEqual(['F1']);
  });
});
