import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTextEditorTool } from './text-editor.js';

/**
 * The editor as an attacker would try it: the agent controls every file of the workspace (and,
 * through commands in the sandbox, can change them while the editor works). A canary directory
 * outside the workspace must stay exactly as it was.
 */
let base: string;
let root: string;
let outside: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-editor-')));
  root = path.join(base, 'workspace');
  outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(-child.pid, 'SIGKILL');
  }
  // A killed flipper's last `ln`/`mv` may still finish inside the kernel; rm retries ENOTEMPTY.
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

async function canaryUntouched(): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
  expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
}

describe('the editor never follows a link out of the workspace', () => {
  it('refuses to create through a dangling link (the link is not the workspace)', async () => {
    await symlink(path.join(outside, 'planted.txt'), path.join(root, 'notes.md'));
    const editor = createTextEditorTool({ root });
    const created = await editor.execute({ command: 'create', path: 'notes.md', file_text: 'x' });
    expect(created.isError).toBe(true);
    expect(created.content).toBe(
      'The path notes.md is a symbolic link; the text editor does not follow symbolic links. Use the path of the file itself.',
    );
    await canaryUntouched();
  });

  it('refuses a link in a middle component, pointing outside or inside', async () => {
    await symlink(outside, path.join(root, 'mid'));
    await mkdir(path.join(root, 'real'));
    await symlink(path.join(root, 'real'), path.join(root, 'alias'));
    const editor = createTextEditorTool({ root });
    for (const target of ['mid/new.txt', 'mid/secret.txt', 'mid/deeper/new.txt', 'alias/a.txt']) {
      for (const call of [
        { command: 'create', path: target, file_text: 'pwned' },
        { command: 'view', path: target },
        { command: 'str_replace', path: target, old_str: 'top', new_str: 'pwned' },
        { command: 'insert', path: target, insert_line: 0, insert_text: 'pwned' },
      ]) {
        const result = await editor.execute(call);
        expect(result.isError, `${call.command} ${target}`).toBe(true);
        expect(result.content).toContain('goes through the symbolic link');
        expect(result.content).not.toContain(base);
      }
    }
    await canaryUntouched();
    expect(await readdir(path.join(root, 'real'))).toEqual([]);
  });

  it('refuses links to /proc files and a FIFO in one line, without blocking', async () => {
    await symlink('/proc/kmsg', path.join(root, 'kmsg'));
    await symlink('/proc/self/pagemap', path.join(root, 'pagemap'));
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const editor = createTextEditorTool({ root });
    const started = Date.now();
    for (const target of ['kmsg', 'pagemap']) {
      const viewed = await editor.execute({ command: 'view', path: target });
      expect(viewed).toEqual({
        content: `The path ${target} is a symbolic link; the text editor does not follow symbolic links. Use the path of the file itself.`,
        isError: true,
      });
    }
    for (const call of [
      { command: 'view', path: 'pipe' },
      { command: 'str_replace', path: 'pipe', old_str: 'a', new_str: 'b' },
      { command: 'create', path: 'pipe', file_text: 'x' },
    ]) {
      expect(await editor.execute(call)).toEqual({
        content:
          'The path pipe is a named pipe (FIFO); the text editor reads and writes only regular files and directories.',
        isError: true,
      });
    }
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(
      (await editor.execute({ command: 'view', path: '/proc/self/environ' })).content,
    ).toContain('outside the workspace');
  }, 10_000);

  it('a directory swapped for a link while the editor writes never lets a write out', async () => {
    await mkdir(path.join(root, 'd'));
    // A process flipping `d` between a real directory and a link to the canary directory.
    const flipper = spawn(
      'sh',
      [
        '-c',
        `cd "${root}" && while :; do mv d d.real && ln -s "${outside}" d && rm d && mv d.real d; done`,
      ],
      // Its own process group, so killing it also kills the `ln` or `mv` it is running.
      { stdio: 'ignore', detached: true },
    );
    children.push(flipper);
    const editor = createTextEditorTool({ root });
    let written = 0;
    for (let attempt = 0; attempt < 300; attempt += 1) {
      const result = await editor.execute({
        command: 'create',
        path: `d/f${attempt}.txt`,
        file_text: 'pwned',
      });
      if (!result.isError) written += 1;
      const viewed = await editor.execute({ command: 'view', path: 'd/secret.txt' });
      expect(viewed.content).not.toContain('top secret');
    }
    const exited = new Promise((resolve) => flipper.once('exit', resolve));
    process.kill(-(flipper.pid as number), 'SIGKILL');
    await exited;
    await canaryUntouched();
    // Some writes landed in the real directory: the race was really run against working code.
    expect(written).toBeGreaterThan(0);
  }, 60_000);

  it('a create replaces a file swapped in as a link instead of writing through it', async () => {
    const editor = createTextEditorTool({ root });
    await editor.execute({ command: 'create', path: 'a.txt', file_text: 'one\n' });
    const flipper = spawn(
      'sh',
      [
        '-c',
        `cd "${root}" && while :; do ln -sf "${outside}/secret.txt" a.tmp && mv -f a.tmp a.txt; done`,
      ],
      // Its own process group, so killing it also kills the `ln` or `mv` it is running.
      { stdio: 'ignore', detached: true },
    );
    children.push(flipper);
    for (let attempt = 0; attempt < 300; attempt += 1) {
      await editor.execute({ command: 'create', path: 'a.txt', file_text: 'pwned\n' });
      await editor.execute({ command: 'insert', path: 'a.txt', insert_line: 0, insert_text: 'x' });
    }
    const exited = new Promise((resolve) => flipper.once('exit', resolve));
    process.kill(-(flipper.pid as number), 'SIGKILL');
    await exited;
    await canaryUntouched();
  }, 60_000);
});

describe('the editor reads and lists within bounds', () => {
  it('refuses a sparse multi-GB file by its size, with the size and a hint, without reading it', async () => {
    const big = path.join(root, 'big.log');
    await writeFile(big, '');
    await truncate(big, 3 * 1024 ** 3);
    const editor = createTextEditorTool({ root });
    const before = process.memoryUsage().rss;
    const started = Date.now();
    for (const call of [
      { command: 'view', path: 'big.log' },
      { command: 'view', path: 'big.log', view_range: [1, 10] },
      { command: 'str_replace', path: 'big.log', old_str: 'a', new_str: 'b' },
    ]) {
      expect(await editor.execute(call)).toEqual({
        content:
          "The file big.log is 3.0 GB, larger than the 1.0 MB the text editor reads. Read a part of it with bash (`head -n 200 big.log`, `sed -n '1000,1200p' big.log`).",
        isError: true,
      });
    }
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  }, 10_000);

  it('lists 100,000 files within the entry budget and the advertised character limit', async () => {
    const many = path.join(root, 'many');
    await mkdir(many);
    for (let index = 0; index < 100_000; index += 1) {
      closeSync(openSync(path.join(many, `file-${index}.txt`), 'w'));
    }
    const editor = createTextEditorTool({ root, maxViewChars: 16_000 });
    const started = Date.now();
    const listing = await editor.execute({ command: 'view', path: '.' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(listing.isError).toBe(false);
    expect(listing.content.length).toBeLessThan(16_200);
    expect(listing.content).toMatch(/output cut at 16000 characters|listing stopped at 1000/);
    const small = createTextEditorTool({ root, maxListEntries: 50 });
    const budget = await small.execute({ command: 'view', path: 'many' });
    expect(budget.content.split('\n').filter((line) => line.includes('file-'))).toHaveLength(50);
    expect(budget.content).toContain('[... listing stopped at 50 entries');
  }, 120_000);

  it('listing sizes are those of the links themselves, never of their targets', async () => {
    await writeFile(path.join(outside, 'large.bin'), Buffer.alloc(5 * 1024 * 1024));
    await symlink(path.join(outside, 'large.bin'), path.join(root, 'probe'));
    await symlink(path.join(outside, 'missing'), path.join(root, 'probe2'));
    const editor = createTextEditorTool({ root });
    const listing = await editor.execute({ command: 'view', path: '.' });
    const line = listing.content.split('\n').find((text) => text.endsWith('\tprobe@'));
    expect(line).toBeDefined();
    expect(line).not.toMatch(/M\t/);
    expect(listing.content).toContain('\tprobe2@');
    expect((await stat(path.join(outside, 'large.bin'))).size).toBe(5 * 1024 * 1024);
  });
});
