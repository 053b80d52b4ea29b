/**
 * Quickstart demo: the real Anthropic SDK `toolRunner` driving Baton's memory tool over a
 * `FileSystemStore` in a temporary directory. The "model" is a local stand-in for the Messages API
 * that plays a scripted first session (no network, no API key needed).
 *
 *   pnpm --filter @baton/core demo
 *   (or: cd packages/core && npx tsx --conditions=@baton/source examples/toolrunner-demo.ts)
 *
 * Prints every tool call with its result, then the final memory tree and files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/resources/beta/messages';
import { createFileSystemStore, createMemoryTool, type MemoryTool } from '@baton/core';
import { startScriptedMessagesApi } from './scripted-messages-api.js';

const FEATURES = `[
  {
    "id": "F1",
    "description": "Add two numbers from the command line",
    "steps": ["run ./add 2 3", "expect 5"],
    "passes": false
  }
]
`;

/** A first session as a coding agent would play it, including two mistakes the tool refuses. */
const SCRIPT = [
  [{ command: 'view', path: '/memories' }],
  [
    {
      command: 'create',
      path: '/memories/progress.md',
      file_text: '# Progress\n\n## Session 1\n- set up memory\n',
    },
    { command: 'create', path: '/memories/features.json', file_text: FEATURES },
    {
      command: 'create',
      path: '/memories/startup.md',
      file_text: '# Startup\nRun ./init.sh, then ./add 2 3.\n',
    },
  ],
  [{ command: 'create', path: '/memories/progress.md', file_text: 'oops, overwrite' }],
  [{ command: 'view', path: '/memories/../../etc/passwd' }],
  [
    {
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '"steps": ["run ./add 2 3", "expect 5"],\n    "passes": false',
      new_str: '"steps": ["run ./add 2 3", "expect 5"],\n    "passes": true',
    },
  ],
  [
    {
      command: 'insert',
      path: '/memories/progress.md',
      insert_line: 4,
      insert_text: '- F1 passes (checked with ./add 2 3)\n',
    },
  ],
  [{ command: 'view', path: '/memories' }],
];

async function main(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-demo-'));
  const api = await startScriptedMessagesApi(SCRIPT, {
    finalText: 'Memory is set up and F1 is marked as passing.',
  });
  const store = await createFileSystemStore({ root: join(directory, 'memories') });
  try {
    const changes: string[] = [];
    const memory = createMemoryTool({
      store,
      session: 'demo-1',
      hooks: {
        afterChange: (change) => {
          changes.push(`${change.command} ${change.path} (${change.bytes} bytes)`);
        },
      },
    });
    const client = new Anthropic({ apiKey: 'demo', baseURL: api.url, maxRetries: 0 });
    const runner = client.beta.messages.toolRunner({
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Start the project: set up your memory.' }],
      tools: [betaMemoryTool(printingHandlers(memory))],
      thread: false,
    });
    const final = await runner.runUntilDone();
    const text = final.content.find((block) => block.type === 'text');
    console.log(`\nassistant: ${text?.type === 'text' ? text.text : '(no text)'}`);

    console.log('\nChange feed (afterChange):');
    for (const change of changes) console.log(`    ${change}`);
    console.log(`\nMemory on disk under ${join(directory, 'memories')}:`);
    for (const entry of await store.list('', { depth: 10, skipHidden: true })) {
      if (entry.kind !== 'file') continue;
      console.log(`\n--- /memories/${entry.path} (${entry.size} bytes)`);
      console.log(indent((await store.read(entry.path)) ?? ''));
    }
  } finally {
    await store.close();
    await api.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Handlers that print each call and its result. They do what `memory.handlers` do (run
 * `execute`, throw a `ToolError` for an error result so the runner sends it with `is_error`),
 * plus the printing.
 */
function printingHandlers(memory: MemoryTool): MemoryTool['handlers'] {
  const run = async (input: unknown): Promise<string> => {
    const result = await memory.execute(input);
    // Printed after the call: the runner runs one turn's calls concurrently.
    console.log(`\n> memory ${JSON.stringify(input)}`);
    console.log(indent(`${result.isError ? '[is_error] ' : ''}${result.content}`));
    if (result.isError) throw new ToolError(result.content);
    return result.content;
  };
  return { view: run, create: run, str_replace: run, insert: run, delete: run, rename: run };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

await main();
