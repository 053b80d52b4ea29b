import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, preparedProjectWorkspace, useTempDirs, writeFiles } from './support/git-fixtures.js';

const setup = preparedProjectWorkspace;

function tree(repo: string): string[] {
  return git(repo, 'ls-tree', '-r', 'baton/p').split('\n');
}

function sh(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@a',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@a',
    },
  });
}

describe('nested repositories are ordinary files to a checkpoint', () => {
  const tempDir = useTempDirs();

  it('a scaffolded empty repository, one with commits and a clone: every file is on the branch', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root);
    // `cargo new`-style: an empty repository with files not yet committed in it.
    await writeFiles(workspace.dir, {
      'tools/helper/Cargo.toml': '[package]\nname = "helper"\n',
      'tools/helper/src/main.rs': 'fn main() {}\n',
      'tools/helper/.gitignore': 'target/\n',
      'tools/helper/target/debug/helper': 'binary\n',
    });
    sh(path.join(workspace.dir, 'tools/helper'), 'init', '-q');
    // A nested repository with commits of its own.
    await writeFiles(workspace.dir, { 'lib/own/a.txt': 'a\n' });
    sh(path.join(workspace.dir, 'lib/own'), 'init', '-q');
    sh(path.join(workspace.dir, 'lib/own'), 'add', '-A');
    sh(path.join(workspace.dir, 'lib/own'), 'commit', '-qm', 'own');
    // A clone of another repository.
    const other = path.join(root, 'other');
    await writeFiles(other, { 'README.md': 'other\n' });
    sh(other, 'init', '-q');
    sh(other, 'add', '-A');
    sh(other, 'commit', '-qm', 'other');
    sh(workspace.dir, 'clone', '-q', other, 'vendor/other');
    await writeFiles(workspace.dir, { 'app.js': 'console.log(1)\n' });

    const checkpoint = await workspace.checkpoint({ subject: 'nested', final: true });
    expect(checkpoint.pushed).toBe(true);
    const files = tree(repo);
    for (const name of [
      'app.js',
      'tools/helper/Cargo.toml',
      'tools/helper/src/main.rs',
      'tools/helper/.gitignore',
      'lib/own/a.txt',
      'vendor/other/README.md',
    ]) {
      expect(files.find((line) => line.endsWith(`\t${name}`))?.split(' ')[0], name).toBe('100644');
    }
    expect(files.some((line) => line.startsWith('160000'))).toBe(false);
    expect(files.some((line) => line.includes('/.git/') || line.endsWith('/.git'))).toBe(false);
    // The nested repository's own ignore rules hold.
    expect(files.some((line) => line.includes('target/debug'))).toBe(false);

    // Later changes inside a nested repository are checkpointed, deletions too.
    await writeFiles(workspace.dir, { 'lib/own/a.txt': 'changed\n' });
    await import('node:fs/promises').then(({ rm }) =>
      rm(path.join(workspace.dir, 'vendor/other/README.md')),
    );
    const second = await workspace.checkpoint({ subject: 'more', final: true });
    expect(second.pushed).toBe(true);
    expect(git(repo, 'show', 'baton/p:lib/own/a.txt')).toBe('changed');
    expect(tree(repo).some((line) => line.endsWith('\tvendor/other/README.md'))).toBe(false);
  }, 60_000);

  it('a planted .git file naming a repository elsewhere is never opened: plain files, canary untouched', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root);
    const elsewhere = path.join(root, 'host-repo');
    await writeFiles(elsewhere, { 'secret.txt': 'host file\n' });
    sh(elsewhere, 'init', '-q');
    sh(elsewhere, 'add', '-A');
    sh(elsewhere, 'commit', '-qm', 'host');
    const canaries = path.join(root, 'canaries');
    await mkdir(canaries);
    // If host git opened that repository it would run its fsmonitor.
    sh(elsewhere, 'config', 'core.fsmonitor', `touch ${canaries}/elsewhere`);
    await writeFiles(workspace.dir, {
      'planted/.git': `gitdir: ${path.join(elsewhere, '.git')}\n`,
      'planted/code.js': 'x\n',
      'inner/code.js': 'y\n',
      'inner/.git/config': `[core]\n\tfsmonitor = "touch ${canaries}/inner"\n`,
      'inner/.git/HEAD': 'ref: refs/heads/main\n',
    });
    await mkdir(path.join(workspace.dir, 'inner/.git/objects'), { recursive: true });
    await mkdir(path.join(workspace.dir, 'inner/.git/refs'), { recursive: true });
    const checkpoint = await workspace.checkpoint({ subject: 'planted', final: true });
    expect(checkpoint.pushed).toBe(true);
    const files = tree(repo);
    expect(files.find((line) => line.endsWith('\tplanted/code.js'))?.split(' ')[0]).toBe('100644');
    expect(files.find((line) => line.endsWith('\tinner/code.js'))?.split(' ')[0]).toBe('100644');
    expect(files.some((line) => line.startsWith('160000'))).toBe(false);
    expect(files.some((line) => line.includes('.git'))).toBe(false);
    expect(await readdir(canaries)).toEqual([]);
    expect(git(elsewhere, '-c', 'core.fsmonitor=false', 'status', '--porcelain')).toBe('');
  }, 60_000);

  it('files left out as secrets are never deleted by a later prepare, byte for byte', async () => {
    const root = await tempDir();
    const { workspace } = await setup(root);
    const key = `sk-ant-api03-${'z'.repeat(40)}`;
    await writeFiles(workspace.dir, {
      '.aws/credentials': '[default]\naws_secret_access_key = abc\n',
      'notes/keys.txt': `KEY=${key}\n`,
      '.env': 'TOKEN=1\n',
      'src/ok.js': 'ok\n',
    });
    const first = await workspace.checkpoint({ subject: 'one', final: true });
    expect(first.skipped.sort()).toEqual(['.aws/credentials', '.env', 'notes/keys.txt']);
    for (let session = 0; session < 3; session += 1) {
      await workspace.prepare(first.head);
      await writeFile(path.join(workspace.dir, `src/s${session}.js`), `${session}\n`);
      await workspace.checkpoint({ subject: `s${session}`, final: true });
    }
    expect(await readFile(path.join(workspace.dir, '.aws/credentials'), 'utf8')).toBe(
      '[default]\naws_secret_access_key = abc\n',
    );
    expect(await readFile(path.join(workspace.dir, 'notes/keys.txt'), 'utf8')).toBe(`KEY=${key}\n`);
    expect(await readFile(path.join(workspace.dir, '.env'), 'utf8')).toBe('TOKEN=1\n');
  }, 60_000);
});
