import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitWorkspace } from './git.js';

let dir: string;
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8' });

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-git-')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('session commits never include secrets', () => {
  it('commits the work but leaves .env, key files and files holding keys out', async () => {
    git(dir, 'init', '-q', '-b', 'main');
    await writeFile(path.join(dir, 'app.js'), 'const password = form.password;\n');
    await writeFile(
      path.join(dir, '.env'),
      'ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz\n',
    );
    await writeFile(path.join(dir, '.env.example'), 'ANTHROPIC_API_KEY=\n');
    await writeFile(path.join(dir, 'server.pem'), 'cert');
    await writeFile(
      path.join(dir, 'config.js'),
      'export const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz";\n',
    );
    const commit = await commitWorkspace(dir, 'baton: session 1 (init) of p: no feature flipped');
    expect(commit?.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(git(dir, 'ls-files').trim().split('\n').sort()).toEqual(['.env.example', 'app.js']);
    // .env and *.pem never get staged (.git/info/exclude); config.js is caught by its content.
    expect(commit?.skipped).toEqual(['config.js']);
    expect(git(dir, 'log', '--format=%an <%ae>%n%s').trim()).toMatch(
      /baton: session 1 \(init\) of p: no feature flipped$/,
    );
  });

  it('unstages a secret added to a file that is already tracked', async () => {
    git(dir, 'init', '-q', '-b', 'main');
    await writeFile(path.join(dir, 'a.txt'), 'one\n');
    await commitWorkspace(dir, 'first');
    await writeFile(path.join(dir, 'a.txt'), 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n');
    const commit = await commitWorkspace(dir, 'second');
    expect(commit).toEqual({ sha: null, message: 'second', skipped: ['a.txt'] });
    expect(git(dir, 'show', 'HEAD:a.txt')).toBe('one\n');
  });

  it('does nothing when the workspace is not the top of its own repository', async () => {
    expect(await commitWorkspace(dir, 'x')).toBeUndefined();
    git(dir, 'init', '-q');
    const nested = path.join(dir, 'nested');
    await mkdir(nested);
    await writeFile(path.join(nested, 'f.txt'), 'f');
    expect(await commitWorkspace(nested, 'x')).toBeUndefined();
    expect(git(dir, 'status', '--porcelain')).toContain('?? nested/');
  });
});
