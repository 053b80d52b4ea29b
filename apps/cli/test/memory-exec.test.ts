import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createLocalProject } from './local-project-fixture.js';
import { oneLine, runCliWithInput, redisCliWorld } from './redis-fixtures.js';

// Each test spawns `baton` (a few seconds per process on a loaded 2-core machine).
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

const FEATURES = JSON.stringify(
  [{ id: 'F1', description: 'a thing', steps: ['check it'], passes: false }],
  null,
  2,
);

function lines(...commands: unknown[]): string {
  return (
    commands
      .map((command) => (typeof command === 'string' ? command : JSON.stringify(command)))
      .join('\n') + '\n'
  );
}

function results(stdout: string): Array<{ content: string; isError: boolean }> {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { content: string; isError: boolean });
}

describe('baton memory exec', () => {
  it('answers each JSON line with one { content, isError } line, in order, on a Redis project', async () => {
    const { redis } = world;
    const id = redis.projectId('exec');
    await redis.control.createProject({ id, goal: '- one', workspace: world.dir });
    const result = await runCliWithInput(
      ['memory', 'exec', id],
      lines(
        { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' },
        { command: 'view', path: '/memories/notes.md' },
        'not json',
        { command: 'view', path: '/etc/passwd' },
      ),
      { cwd: world.dir, env: redis.env(world.dir) },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const answers = results(result.stdout);
    expect(answers).toHaveLength(4);
    expect(answers[0]).toEqual({
      content: 'File created successfully at: /memories/notes.md',
      isError: false,
    });
    expect(answers[1]?.isError).toBe(false);
    expect(answers[1]?.content).toContain('hello');
    expect(answers[2]).toEqual({
      content: expect.stringMatching(/^line 3 is not JSON/) as unknown,
      isError: true,
    });
    expect(answers[3]?.isError).toBe(true);
    const store = await redis.control.memoryStore(id);
    expect(await store.read('notes.md')).toBe('hello\n');
  });

  it('applies the checklist guard (unless --no-guard) on a local project', async () => {
    const { redis } = world;
    const project = await createLocalProject(world.dir, 'local-e', { 'features.json': FEATURES });
    const rewrite = {
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '"description": "a thing"',
      new_str: '"description": "another thing"',
    };
    const guarded = await runCliWithInput(
      ['memory', 'exec', 'local-e', '--local'],
      lines(rewrite),
      { cwd: world.dir, env: redis.env(world.dir) },
    );
    expect(guarded.code).toBe(0);
    expect(results(guarded.stdout)[0]?.isError).toBe(true);
    expect(await readFile(path.join(project, 'memories', 'features.json'), 'utf8')).toBe(FEATURES);

    const unguarded = await runCliWithInput(
      ['memory', 'exec', 'local-e', '--local', '--no-guard'],
      lines(rewrite),
      { cwd: world.dir, env: redis.env(world.dir) },
    );
    expect(results(unguarded.stdout)[0]?.isError).toBe(false);
    expect(await readFile(path.join(project, 'memories', 'features.json'), 'utf8')).toContain(
      'another thing',
    );
  });

  it('an unknown project exits 7 with one line', async () => {
    const result = await runCliWithInput(['memory', 'exec', 'nobody-y'], '', {
      cwd: world.dir,
      env: world.redis.env(world.dir),
    });
    expect(result.code).toBe(7);
    expect(oneLine(result.stderr)).toContain('no project nobody-y');
  });
});
