import { get } from 'node:http';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { REDIS_URL, deletePrefix, randomHex } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `pnpm --filter <app> deploy --prod <dir>` gives a folder with the app and only its production
 * dependencies; each entry point must start from there. A runtime import declared as a
 * devDependency (the dashboard's @baton/session, the worker's @baton/model-sim) breaks this.
 */

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const prefix = `{deploy-${randomHex(4)}}`;
let work: string;

async function deploy(app: string): Promise<string> {
  const target = path.join(work, app);
  await run('pnpm', ['--filter', `@baton/${app}`, 'deploy', '--prod', target], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  // Nothing of the workspace's devDependencies came along.
  expect(existsSync(path.join(target, 'node_modules/@baton/test-support'))).toBe(false);
  return target;
}

interface Started {
  firstLine: Promise<string>;
  stop(): Promise<number | null>;
  output(): string;
}

/** Starts `node args` in `cwd`; `firstLine` resolves with the first stdout line containing `marker`. */
function start(args: string[], cwd: string, env: NodeJS.ProcessEnv, marker: string): Started {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const line = stdout.split('\n').find((candidate) => candidate.includes(marker));
      if (line !== undefined) resolve(line);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    void exited.then((code) =>
      reject(new Error(`exited ${code} before "${marker}":\n${stdout}\n${stderr}`)),
    );
  });
  return {
    firstLine,
    output: () => `${stdout}\n${stderr}`,
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  for (const key of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'BATON_MODEL']) {
    if (!(key in extra)) delete env[key];
  }
  return env;
}

beforeAll(async () => {
  for (const app of ['cli', 'worker', 'dashboard']) {
    if (!existsSync(path.join(root, 'apps', app, 'dist/index.js'))) {
      throw new Error(
        `apps/${app} is not built: run \`pnpm turbo run build --filter=@baton/install-tests...\` first`,
      );
    }
  }
  work = await mkdtemp(path.join(tmpdir(), 'baton-deploy-'));
});

afterAll(async () => {
  await deletePrefix(prefix);
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('production deploys start from their folder', () => {
  it('the CLI: `baton run` on the built-in simulator completes', async () => {
    const cli = await deploy('cli');
    const { stdout } = await run(
      process.execPath,
      [path.join(cli, 'dist/main.js'), 'run', '--goal', '- print hello', '--project', 'deployed'],
      { cwd: work, env: cleanEnv({ BATON_HOME: path.join(work, 'home') }) },
    );
    expect(stdout).toContain('Features [██████████] 1/1');
  });

  it('the worker: starts on Redis with the simulator, and drains on SIGTERM', async () => {
    const worker = await deploy('worker');
    const started = start(
      ['dist/main.js'],
      worker,
      cleanEnv({
        BATON_MODEL: 'sim',
        REDIS_URL,
        BATON_PREFIX: prefix,
        BATON_HTTP_PORT: '0',
        BATON_HOME: path.join(work, 'worker-home'),
      }),
      '"worker started"',
    );
    expect(await started.firstLine).toContain('"worker started"');
    expect(await started.stop()).toBe(0);
  });

  it('the dashboard: serves its pages from the deployed folder', async () => {
    const dashboard = await deploy('dashboard');
    await copyFile(
      path.join(here, '../consumer/start-dashboard.mjs'),
      path.join(dashboard, 'start-dashboard.mjs'),
    );
    const started = start(
      ['start-dashboard.mjs'],
      dashboard,
      cleanEnv({ REDIS_URL, BATON_PREFIX: prefix }),
      '"ready"',
    );
    const { url } = JSON.parse(await started.firstLine) as { url: string };
    // Opened as a browser's address bar does: the dashboard serves its HTML to top-level
    // navigations only, and fetch() always says `Sec-Fetch-Mode: cors`.
    const page = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      get(
        url,
        { headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        },
      ).on('error', reject);
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<html');
    const projects = await fetch(new URL('/api/projects', url));
    expect(projects.status, started.output()).toBe(200);
    expect(await started.stop()).toBe(0);
  });
});
