import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitMessage, runGit } from '../src/repository/git.js';

// A git that prints nothing and fails left only "git failed" in a checkpoint's refusal (seen once
// with 15,000 secret files, cause unknown). The message now says how git ended, so the next
// occurrence names its exit status or signal.
describe('a git that fails silently', () => {
  let bin: string;
  const savedPath = process.env.PATH;

  beforeAll(async () => {
    bin = await mkdtemp(path.join(tmpdir(), 'baton-fake-git-'));
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
  });
  afterAll(async () => {
    process.env.PATH = savedPath;
    await rm(bin, { recursive: true, force: true });
  });

  async function fakeGit(script: string): Promise<void> {
    await writeFile(path.join(bin, 'git'), `#!/bin/sh\n${script}\n`);
    await chmod(path.join(bin, 'git'), 0o755);
  }

  it('names the exit status when git printed nothing', async () => {
    await fakeGit('exit 3');
    const output = await runGit(['status']);
    expect(output.code).toBe(3);
    expect(gitMessage(output)).toBe('git failed (exit status 3)');
  });

  it('names the signal that killed git', async () => {
    await fakeGit('kill -SEGV $$');
    expect(gitMessage(await runGit(['status']))).toBe('git failed (killed by SIGSEGV)');
  });

  it('keeps git own words when it printed a reason, and warnings alone are no reason', async () => {
    await fakeGit('echo "fatal: not a git repository" >&2; exit 128');
    expect(gitMessage(await runGit(['status']))).toBe('not a git repository');
    await fakeGit('echo "warning: something" >&2; exit 1');
    expect(gitMessage(await runGit(['status']))).toBe('git failed (exit status 1)');
  });

  it('a successful run has no ending to tell', async () => {
    await fakeGit('echo ok');
    const output = await runGit(['status']);
    expect(output).toMatchObject({ code: 0, stdout: 'ok\n' });
    expect(output.ended).toBeUndefined();
  });
});
