/**
 * End to end: the real SDK client and `toolRunner` with `betaMemoryTool(handlers)`, against a
 * local stand-in for the Messages API that plays a scripted sequence of memory calls. Asserts
 * what the runner sent back (content and `is_error` of every tool_result) and the final store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileSystemStore, createMemoryTool, type MemoryChange } from '@baton/core';
import {
  startScriptedMessagesApi,
  type ScriptedMessagesApi,
} from '../examples/scripted-messages-api.js';

const FEATURES = '[\n  {\n    "id": "F1",\n    "passes": false\n  }\n]\n';

const SCRIPT = [
  [{ command: 'view', path: '/memories' }],
  [
    {
      command: 'create',
      path: '/memories/progress.md',
      file_text: '# Progress\n- session 1: init\n',
    },
    { command: 'create', path: '/memories/features.json', file_text: FEATURES },
  ],
  [
    {
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '"id": "F1",\n    "passes": false',
      new_str: '"id": "F1",\n    "passes": true',
    },
  ],
  [{ command: 'create', path: '/memories/progress.md', file_text: 'overwrite attempt' }],
  [{ command: 'view', path: '/memories/../etc/passwd' }],
  [
    {
      command: 'insert',
      path: '/memories/progress.md',
      insert_line: 2,
      insert_text: '- session 2: F1 passes',
    },
  ],
  [{ command: 'teleport', path: '/memories/progress.md' }],
  [{ command: 'view', path: '/memories/progress.md' }],
];

let api: ScriptedMessagesApi | undefined;
let directory: string | undefined;
afterEach(async () => {
  await api?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('the SDK toolRunner drives our memory tool end to end', () => {
  it('sends our exact results and is_error flags back and leaves the expected memory', async () => {
    api = await startScriptedMessagesApi(SCRIPT, { finalText: 'Done.' });
    directory = await mkdtemp(join(tmpdir(), 'baton-e2e-'));
    const store = await createFileSystemStore({ root: join(directory, 'memories') });
    const changes: MemoryChange[] = [];
    const memory = createMemoryTool({
      store,
      session: 'e2e',
      hooks: { afterChange: (change) => void changes.push(change) },
    });
    const client = new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 });

    const runner = client.beta.messages.toolRunner({
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Set up your memory.' }],
      tools: [betaMemoryTool(memory.handlers)],
      thread: false,
    });
    const final = await runner.runUntilDone();
    await store.close();

    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Done.' })]);
    expect(api.requests).toHaveLength(SCRIPT.length + 1);
    expect(api.requests[0]!.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);

    const results = api.toolResults().map((block) => ({
      content: block.content,
      is_error: block.is_error === true,
    }));
    expect(results).toEqual([
      {
        content:
          "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories",
        is_error: false,
      },
      { content: 'File created successfully at: /memories/progress.md', is_error: false },
      { content: 'File created successfully at: /memories/features.json', is_error: false },
      {
        content: [
          'The memory file has been edited. Here is the snippet showing the change (with line numbers):',
          '     1\t[',
          '     2\t  {',
          '     3\t    "id": "F1",',
          '     4\t    "passes": true',
          '     5\t  }',
          '     6\t]',
        ].join('\n'),
        is_error: false,
      },
      { content: 'Error: File /memories/progress.md already exists', is_error: true },
      {
        content:
          "Error: The path /memories/../etc/passwd contains a '..' segment, which is not allowed. Write the path without '..'.",
        is_error: true,
      },
      { content: 'The file /memories/progress.md has been edited.', is_error: false },
      {
        // betaMemoryTool looks the handler up itself, so an unknown command never reaches us;
        // `execute` answers it with `Error: Unknown memory command "teleport". ...` instead.
        content: 'Error: teleport not implemented',
        is_error: true,
      },
      {
        content: [
          "Here's the content of /memories/progress.md with line numbers:",
          '     1\t# Progress',
          '     2\t- session 1: init',
          '     3\t- session 2: F1 passes',
        ].join('\n'),
        is_error: false,
      },
    ]);

    const reopened = await createFileSystemStore({ root: join(directory, 'memories') });
    expect(await reopened.read('progress.md')).toBe(
      '# Progress\n- session 1: init\n- session 2: F1 passes\n',
    );
    expect(await reopened.read('features.json')).toBe(FEATURES.replace('false', 'true'));
    expect((await reopened.list('', { depth: 5 })).map((entry) => entry.path)).toEqual([
      'features.json',
      'progress.md',
    ]);
    await reopened.close();
    expect(changes.map((change) => `${change.command} ${change.path}`)).toEqual([
      'create /memories/progress.md',
      'create /memories/features.json',
      'str_replace /memories/features.json',
      'insert /memories/progress.md',
    ]);
  });
});
