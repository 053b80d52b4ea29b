import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { MAX_SCANNED_BYTES } from '../src/repository/secret-files.js';
import { git, preparedProjectWorkspace, useTempDirs, writeFiles } from './support/git-fixtures.js';

const KEY = `sk-ant-api03-${'k'.repeat(40)}`;

const setup = preparedProjectWorkspace;

describe('the secret scan of a checkpoint', () => {
  const tempDir = useTempDirs();

  it('never opens a link (/proc/kmsg, pagemap, a host file with a key) or a FIFO, and finishes', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root);
    const outside = path.join(root, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'has-key.txt'), `KEY=${KEY}\n`);
    await writeFile(path.join(outside, 'no-key.txt'), 'nothing\n');
    await symlink('/proc/kmsg', path.join(workspace.dir, 'kmsg'));
    await symlink('/proc/self/pagemap', path.join(workspace.dir, 'pagemap'));
    await symlink(path.join(outside, 'has-key.txt'), path.join(workspace.dir, 'probe-key'));
    await symlink(path.join(outside, 'no-key.txt'), path.join(workspace.dir, 'probe-plain'));
    execFileSync('mkfifo', [path.join(workspace.dir, 'pipe')]);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    const started = Date.now();
    const checkpoint = await workspace.checkpoint({ subject: 'links', final: true });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(checkpoint.pushed).toBe(true);
    // Both probes are treated alike: whether a host file holds a key does not show.
    expect(checkpoint.skipped).toEqual([]);
    const tree = git(repo, 'ls-tree', '-r', 'baton/p').split('\n');
    const modeOf = (name: string) => tree.find((line) => line.endsWith(`\t${name}`))?.split(' ')[0];
    expect(modeOf('probe-key')).toBe('120000');
    expect(modeOf('probe-plain')).toBe('120000');
    expect(modeOf('kmsg')).toBe('120000');
    expect(modeOf('pipe')).toBeUndefined();
    expect(await readFile(path.join(outside, 'has-key.txt'), 'utf8')).toBe(`KEY=${KEY}\n`);
  }, 60_000);

  it('reads a bounded prefix: a key in the first MiB keeps a file out, adversarial files scan fast', async () => {
    const root = await tempDir();
    const { workspace } = await setup(root);
    const filler = 'x'.repeat(MAX_SCANNED_BYTES);
    await writeFiles(workspace.dir, {
      'early-key.log': `${KEY}\n${filler}`,
      'jwt-bomb.txt': 'eyJ-'.repeat(MAX_SCANNED_BYTES / 4),
      'url-bomb.txt': 'a.'.repeat(MAX_SCANNED_BYTES / 2),
      'late-key.log': `${filler}\n${KEY}\n`,
    });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = Date.now();
    const checkpoint = await workspace.checkpoint({ subject: 'big', final: true });
    delay.disable();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(checkpoint.skipped).toEqual(['early-key.log']);
    // One file's scan at a time: the event loop is never held for long.
    expect(delay.max / 1e6).toBeLessThan(1_500);
  }, 60_000);

  it('30,000 files left out as secrets do not fail the checkpoint (paths on stdin, not argv)', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root);
    const fixtures = path.join(workspace.dir, 'fixtures', 'keys-with-a-long-directory-name');
    await mkdir(fixtures, { recursive: true });
    for (let index = 0; index < 30_000; index += 1) {
      await writeFile(path.join(fixtures, `fixture-number-${index}.asc`), 'x\n');
    }
    await writeFiles(workspace.dir, { 'src/app.js': 'console.log(1)\n' });
    const checkpoint = await workspace.checkpoint({ subject: 'many', final: true });
    expect(checkpoint.pushed).toBe(true);
    expect(checkpoint.skipped).toHaveLength(30_000);
    expect(git(repo, 'show', 'baton/p:src/app.js')).toBe('console.log(1)');
    expect(git(repo, 'ls-tree', '-r', '--name-only', 'baton/p')).not.toContain('.asc');
  }, 300_000);
});
