import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages';
import { startModelSim, type ModelSim, type SimScriptRequest } from '@baton/model-sim';
import { REDIS_URL, deletePrefix, randomHex } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * @baton/core, @baton/storage-redis and @baton/context-config as a user gets them: packed with
 * `pnpm pack`, installed from the tarballs into a fresh project beside the newest
 * @anthropic-ai/sdk and ioredis from the registry, type-checked under NodeNext and Bundler, and
 * run: the SDK's own tool runner drives Baton's memory tool over the filesystem and Redis stores
 * against our simulator, and every tool result must be the protocol's exact string
 * (shared spec: memory-tool.md). With a second copy of the SDK (an exact dependency instead of a
 * peer), `ToolError` is not the runner's class and the errors arrive as `Error: ...` instead.
 */

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const LIBRARIES = ['core', 'storage-redis', 'context-config'] as const;

/** The memory commands the simulated model sends in each session, one per turn. */
const COMMANDS = [
  { command: 'view', path: '/memories' },
  { command: 'create', path: '/memories/progress.md', file_text: '# Progress' },
  { command: 'create', path: '/memories/progress.md', file_text: 'again' },
  { command: 'view', path: '/memories/missing.md' },
  { command: 'str_replace', path: '/memories/progress.md', old_str: 'nowhere', new_str: 'x' },
  { command: 'view', path: '/memories/progress.md' },
  { command: 'insert', path: '/memories/progress.md', insert_line: 9, insert_text: 'x' },
  { command: 'rename', old_path: '/memories/progress.md', new_path: '/memories/log.md' },
  { command: 'delete', path: '/memories/log.md' },
  { command: 'delete', path: '/memories/log.md' },
];

/** What the tool answers, from the protocol (is_error, exact content). */
const EXPECTED: Array<[boolean, string]> = [
  // (the listing of the empty root is checked by its header below)
  [false, ''],
  [false, 'File created successfully at: /memories/progress.md'],
  [true, 'Error: File /memories/progress.md already exists'],
  [true, 'The path /memories/missing.md does not exist. Please provide a valid path.'],
  [
    true,
    'No replacement was performed, old_str `nowhere` did not appear verbatim in /memories/progress.md.',
  ],
  [false, "Here's the content of /memories/progress.md with line numbers:\n     1\t# Progress"],
  [
    true,
    'Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 1]',
  ],
  [false, 'Successfully renamed /memories/progress.md to /memories/log.md'],
  [false, 'Successfully deleted /memories/log.md'],
  [true, 'Error: The path /memories/log.md does not exist'],
];
const LISTING_HEADER =
  "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:";

interface ToolResult {
  isError: boolean;
  content: string;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block: { type?: string; text?: string }) => (block.type === 'text' ? block.text : ''))
      .join('');
  }
  return '';
}

function sessionLabel(messages: BetaMessageParam[]): string {
  return textOf(messages[0]?.content).replace('consumer session: ', '');
}

function toolResults(messages: BetaMessageParam[]): ToolResult[] {
  const results: ToolResult[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      results.push({ isError: block.is_error === true, content: textOf(block.content) });
    }
  }
  return results;
}

let work: string;
let consumer: string;
let sim: ModelSim;
const prefix = `consumer-${randomHex(4)}`;
/** The full history of each session's last request, by label. */
/** The newest versions on the registry, installed into the consumer. */
const newest: Record<string, string> = {};
const histories = new Map<string, BetaMessageParam[]>();
const requestsSeen: SimScriptRequest[] = [];

async function exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  try {
    return await run(command, args, {
      cwd,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd}: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
      { cause: error },
    );
  }
}

beforeAll(async () => {
  for (const name of LIBRARIES) {
    if (!existsSync(path.join(root, 'packages', name, 'dist/index.js'))) {
      throw new Error(
        `packages/${name} is not built: run \`pnpm turbo run build --filter=@baton/install-tests...\` first`,
      );
    }
  }
  work = await mkdtemp(path.join(tmpdir(), 'baton-consumer-'));
  const tarballs = path.join(work, 'tarballs');
  consumer = path.join(work, 'consumer');
  await mkdir(tarballs);
  await mkdir(consumer);
  const dependencies: Record<string, string> = {};
  for (const name of LIBRARIES) {
    await exec('pnpm', ['pack', '--pack-destination', tarballs], path.join(root, 'packages', name));
  }
  for (const file of await readdir(tarballs)) {
    const name = /^baton-(.+)-\d+\.\d+\.\d+\.tgz$/.exec(file)?.[1];
    if (name !== undefined) dependencies[`@baton/${name}`] = `file:${path.join(tarballs, file)}`;
  }
  expect(Object.keys(dependencies).sort()).toEqual(
    LIBRARIES.map((name) => `@baton/${name}`).sort(),
  );
  // The newest SDK and ioredis, as a new project would get them; TypeScript as we pin it.
  for (const name of ['@anthropic-ai/sdk', 'ioredis']) {
    newest[name] = (await exec('npm', ['view', name, 'version'], work)).stdout.trim();
  }
  const rootManifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  await writeFile(
    path.join(consumer, 'package.json'),
    JSON.stringify({
      name: 'baton-consumer',
      private: true,
      type: 'module',
      dependencies: { ...dependencies, ...newest },
      devDependencies: {
        typescript: rootManifest.devDependencies.typescript,
        '@types/node': rootManifest.devDependencies['@types/node'],
      },
    }),
  );
  for (const file of [
    'consumer.ts',
    'tsconfig.nodenext.json',
    'tsconfig.bundler.json',
    'require-check.cjs',
    'sdk-against-sim.mjs',
  ]) {
    await copyFile(path.join(here, '../consumer', file), path.join(consumer, file));
  }
  // npm, as most users install; its cache (~/.npm) keeps later runs fast.
  await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], consumer);
}, 300_000);

afterAll(async () => {
  await sim?.close();
  await deletePrefix(prefix);
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('the packed libraries in a fresh project with the newest SDK and ioredis', () => {
  it('installs exactly one copy of @anthropic-ai/sdk and of ioredis (peer dependencies)', async () => {
    const { stdout } = await exec(
      'npm',
      ['ls', '--all', '--parseable', '@anthropic-ai/sdk', 'ioredis'],
      consumer,
    );
    for (const [name, version] of Object.entries(newest)) {
      const installed = JSON.parse(
        await readFile(path.join(consumer, 'node_modules', name, 'package.json'), 'utf8'),
      ) as { version: string };
      expect(installed.version, name).toBe(version);
    }
    const copies = stdout
      .trim()
      .split('\n')
      .filter((line) => line.includes('node_modules'))
      .map((line) => path.relative(consumer, line));
    expect(copies.sort()).toEqual(['node_modules/@anthropic-ai/sdk', 'node_modules/ioredis']);
  });

  it('each installed manifest names its license, repository folder, homepage and issue tracker, and no source condition', async () => {
    const rootManifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
      repository: { url: string };
      bugs: { url: string };
    };
    for (const name of LIBRARIES) {
      const installed = path.join(consumer, 'node_modules/@baton', name);
      const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')) as {
        license?: string;
        repository?: { type?: string; url?: string; directory?: string };
        homepage?: string;
        bugs?: { url?: string };
        exports?: unknown;
      };
      expect(manifest.license, name).toBe('MIT');
      expect(existsSync(path.join(installed, 'LICENSE')), name).toBe(true);
      expect(manifest.repository, name).toEqual({
        type: 'git',
        url: rootManifest.repository.url,
        directory: `packages/${name}`,
      });
      expect(manifest.homepage, name).toMatch(new RegExp(`/packages/${name}#readme$`, 'u'));
      expect(manifest.bugs?.url, name).toBe(rootManifest.bugs.url);
      expect(JSON.stringify(manifest.exports), name).not.toContain('@baton/source');
    }
  });

  it('type-checks under module NodeNext and under moduleResolution Bundler', async () => {
    const tsc = path.join(consumer, 'node_modules/.bin/tsc');
    await exec(tsc, ['-p', 'tsconfig.bundler.json'], consumer);
    await exec(tsc, ['-p', 'tsconfig.nodenext.json'], consumer);
    expect(existsSync(path.join(consumer, 'out/consumer.js'))).toBe(true);
  });

  it('the SDK tool runner gets the protocol strings from the memory tool over both stores', async () => {
    sim = await startModelSim({
      script(request) {
        requestsSeen.push(request);
        const label = sessionLabel(request.messages);
        histories.set(label, request.messages);
        const turn = request.messages.filter((message) => message.role === 'assistant').length;
        const input = COMMANDS[turn];
        if (input === undefined) return { content: [{ type: 'text', text: `${label} done` }] };
        return { content: [{ type: 'tool_use', name: 'memory', input }] };
      },
    });
    // Compiled by the previous test (tsc under NodeNext emits out/consumer.js).
    if (!existsSync(path.join(consumer, 'out/consumer.js'))) {
      await exec(
        path.join(consumer, 'node_modules/.bin/tsc'),
        ['-p', 'tsconfig.nodenext.json'],
        consumer,
      );
    }
    const { stdout } = await exec(process.execPath, ['out/consumer.js'], consumer, {
      SIM_URL: sim.url,
      MEMORY_ROOT: path.join(work, 'memories'),
      REDIS_URL,
      REDIS_PREFIX: prefix,
    });
    expect(stdout).toBe('filesystem: filesystem done\nredis: redis done\n');
    // context-config's betas and context_management reached the API (the simulator refuses
    // context_management without its beta header).
    expect(requestsSeen[0]?.params.context_management).toBeDefined();
    for (const label of ['filesystem', 'redis']) {
      const results = toolResults(histories.get(label) ?? []);
      expect(results).toHaveLength(COMMANDS.length);
      const [listing, ...rest] = results;
      expect(listing?.isError).toBe(false);
      expect(listing?.content.split('\n')[0]).toBe(LISTING_HEADER);
      expect(rest.map((result) => [result.isError, result.content])).toEqual(EXPECTED.slice(1));
    }
  });

  it("the newest SDK's streaming and error parsing read the simulator as they read the API", async () => {
    const faulted = await startModelSim({
      faults: {
        streamErrorOn: [3],
        maxTokensOn: [4],
        unauthorizedOn: [5],
        forbiddenOn: [6],
        unknownModels: ['claude-nope-9'],
        rateLimitOn: [8, 11],
        overloadedOn: [9],
        serverErrorOn: [10],
        cutStreamOn: [13],
        emptyReplyOn: [14],
        retryAfterSeconds: 0.3,
      },
      script(request) {
        if (!JSON.stringify(request.messages[0]?.content).includes('tool')) {
          return { content: [{ type: 'text', text: 'Hello from the simulator.' }] };
        }
        const input = { text: 'a note long enough to be cut in the middle of its input' };
        return {
          content: [
            { type: 'text', text: 'Writing it down.' },
            { type: 'tool_use', name: 'note', input },
          ],
        };
      },
    });
    let stdout: string;
    try {
      ({ stdout } = await exec(process.execPath, ['sdk-against-sim.mjs'], consumer, {
        SIM_URL: faulted.url,
      }));
    } finally {
      await faulted.close();
    }
    const steps = new Map(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { step: string } & Record<string, unknown>)
        .map((line) => [line.step, line]),
    );
    const block = ['content_block_start', 'content_block_delta', 'content_block_stop'];
    // The API's event order, as the SDK hands it on (it keeps `ping` to itself).
    expect(steps.get('text')).toMatchObject({
      events: ['message_start', ...block, 'message_delta', 'message_stop'],
      stopReason: 'end_turn',
      content: [{ type: 'text', text: 'Hello from the simulator.' }],
    });
    expect(steps.get('tool')).toMatchObject({
      stopReason: 'tool_use',
      content: [
        { type: 'text', text: 'Writing it down.' },
        {
          type: 'tool_use',
          name: 'note',
          input: { text: 'a note long enough to be cut in the middle of its input' },
        },
      ],
    });
    const toolEvents = steps.get('tool')?.events as string[];
    expect(toolEvents.filter((type) => type === 'content_block_start')).toHaveLength(2);
    expect(toolEvents.at(-2)).toBe('message_delta');
    // An error event after the 200: an APIError without a status, of the body's type.
    expect(steps.get('stream-error')).toMatchObject({
      events: ['message_start', 'content_block_start', 'content_block_delta'],
      error: { isAPIError: true, status: null, type: 'overloaded_error' },
    });
    // max_tokens inside a tool call: the SDK parses the cut input as far as it goes.
    expect(steps.get('max-tokens-in-tool-use')).toMatchObject({
      stopReason: 'max_tokens',
      content: [{ type: 'text' }, { type: 'tool_use', name: 'note' }],
    });
    const errors: Array<[string, RegExp, number, string, string]> = [
      ['401', /^AuthenticationError$/u, 401, 'authentication_error', 'false'],
      ['403', /^PermissionDeniedError$/u, 403, 'permission_error', 'false'],
      ['404', /^NotFoundError$/u, 404, 'not_found_error', 'false'],
      ['429', /^RateLimitError$/u, 429, 'rate_limit_error', 'true'],
      // SDK 1.16 has a class of its own for 529; older ones give InternalServerError.
      ['529', /^(OverloadedError|InternalServerError)$/u, 529, 'overloaded_error', 'true'],
      ['500', /^InternalServerError$/u, 500, 'api_error', 'true'],
    ];
    for (const [step, name, status, type, shouldRetry] of errors) {
      const error = (steps.get(step) as { error?: Record<string, unknown> } | undefined)?.error;
      expect(error, step).toMatchObject({ isAPIError: true, status, type, shouldRetry });
      expect(String(error?.name), step).toMatch(name);
      expect(error?.requestId, step).toBe('req_sim_');
    }
    expect(steps.get('429')).toMatchObject({ error: { retryAfter: '0.3' } });
    expect(steps.get('529')).toMatchObject({ error: { retryAfter: '0.3' } });
    // With its own retries on, the SDK waited the retry-after before sending the request again.
    expect(steps.get('429-retried')).toMatchObject({ stopReason: 'end_turn' });
    const log = faulted.received;
    const limited = log.find((record) => record.number === 11);
    const retried = log.find((record) => record.number === 12);
    expect(limited?.status).toBe(429);
    expect(retried?.status).toBe(200);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(300);
    // A stream cut mid-response: an error without a status whose cause is fetch's `terminated`.
    // SDK 1.17 calls it an APIConnectionError ("Connection error."); older ones an AnthropicError
    // that is no APIError. An empty reply streams as message_start, message_delta, message_stop.
    expect(steps.get('cut-stream')).toMatchObject({
      events: ['message_start', 'content_block_start', 'content_block_delta'],
      error: { status: null, cause: 'terminated' },
    });
    const cut = (steps.get('cut-stream') as { error?: Record<string, unknown> } | undefined)?.error;
    expect(`${String(cut?.name)} ${String(cut?.isAPIError)}`).toMatch(
      /^(APIConnectionError true|AnthropicError false)$/u,
    );
    expect(steps.get('empty-reply')).toMatchObject({
      events: ['message_start', 'message_delta', 'message_stop'],
      stopReason: 'end_turn',
      content: [],
      usage: { output: 2 },
    });
    expect(steps.size).toBe(13);
  });

  it('CommonJS consumers can require every library', async () => {
    const { stdout } = await exec(process.execPath, ['require-check.cjs'], consumer);
    expect(stdout.trim()).toBe('function function function');
  });
});
