import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_POINTER } from '../src/exit-codes.js';
import { runCli } from './helpers.js';
import { closedPort, redisCliWorld } from './redis-fixtures.js';

const here = path.dirname(fileURLToPath(import.meta.url));

const world = redisCliWorld();

describe('one CLI, one set of conventions', () => {
  it('baton --version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(await readFile(path.join(here, '../package.json'), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const result = await world.cli([flag]);
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('lists the exit codes once, in baton --help, and every verb points there', async () => {
    const root = await world.cli(['--help']);
    expect(root.stdout).toContain('Exit codes (the same for every verb):');
    expect(root.stdout).toMatch(/^ {2}8 {4}Redis does not answer/mu);
    const { renderDocs } = (await import(path.join(here, '../scripts/gen-cli-docs.mjs'))) as {
      renderDocs: () => string;
    };
    const sections = renderDocs().split('\n## baton ').slice(1);
    expect(sections.length).toBeGreaterThan(15);
    for (const section of sections) {
      const verb = section.split('\n')[0];
      expect(section, `baton ${verb}`).toContain(EXIT_CODE_POINTER);
      // No verb keeps a list of its own.
      expect(section, `baton ${verb}`).not.toMatch(/Exit codes: 0 ok,/u);
    }
  });

  it('Redis unreachable exits 8 from baton worker and from the worker entry point alike', async () => {
    const { redis } = world;
    const port = await closedPort();
    const env = redis.env(world.dir, {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      BATON_MODEL: 'sim',
      BATON_HTTP_PORT: '-1',
    });
    const viaCli = await runCli(['worker'], { cwd: world.dir, env });
    expect(viaCli.code).toBe(8);
    const { spawn } = await import('node:child_process');
    const workerMain = path.join(here, '../../worker/dist/main.js');
    const code = await new Promise<number | null>((resolve) => {
      spawn(process.execPath, [workerMain], { env, stdio: 'ignore' }).on('exit', resolve);
    });
    expect(code).toBe(8);
  });

  it('FORCE_COLOR colours output into a pipe, and FORCE_COLOR=0 never', async () => {
    const { redis } = world;
    const id = redis.projectId('color');
    await redis.control.createProject({ id, goal: 'Colour me\n- one thing' });
    await redis.append(id, { type: 'note', at: Date.now(), text: 'hello' });
    const forced = await world.cli(['logs', id], { FORCE_COLOR: '1' });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('\u001b[');
    const plain = await world.cli(['logs', id], { FORCE_COLOR: '0', NO_COLOR: undefined });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('hello');
    expect(plain.stdout).not.toContain('\u001b[');
  });
});
