import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CommandSandbox,
  type SandboxPolicyInput,
  WorkspaceError,
  openCommandSandbox,
  parseSandboxPolicy,
} from '../src/index.js';
import { createUserRepo, git, repoWorkspace, useTempDirs } from './support/git-fixtures.js';

/**
 * The workspace limits (`limits.workspaceMb`, `limits.workspaceFiles`): a command that goes over
 * is told in one line (stopped when it keeps writing), no single file grows past the limit, and
 * no checkpoint is committed until the workspace is back under.
 */
describe('a workspace over its limits', () => {
  const tempDir = useTempDirs();
  let sandbox: CommandSandbox | undefined;
  afterEach(async () => {
    await sandbox?.dispose();
    sandbox = undefined;
  });

  async function open(workspace: string, limits: SandboxPolicyInput['limits']) {
    sandbox = await openCommandSandbox({
      workspace,
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({ limits }) },
    });
    return sandbox;
  }

  async function run(commands: CommandSandbox, command: string) {
    let output = '';
    const result = await commands.run(command, { onOutput: (chunk) => (output += chunk) });
    return { ...result, output };
  }

  it('tells the command that filled it, in one line naming the setting and no host path', async () => {
    const workspace = await tempDir();
    const commands = await open(workspace, { workspaceMb: 1 });
    const within = await run(commands, 'head -c 300000 /dev/urandom > a.bin');
    expect(within.exitCode).toBe(0);
    expect(within.workspaceFull).toBeUndefined();
    const over = await run(
      commands,
      'head -c 500000 /dev/urandom > b.bin && head -c 500000 /dev/urandom > c.bin',
    );
    expect(over.exitCode).toBe(0);
    expect(over.workspaceFull).toMatch(
      /^The workspace is over its disk limit: 1\.\d MiB used of 1\.0 MiB \(sandbox limit workspaceMb\); delete files/,
    );
    expect(over.workspaceFull).not.toContain(workspace);
    expect(over.workspaceFull?.split('\n')).toHaveLength(1);
    // Deleting brings it back under: the next command is not told.
    const cleaned = await run(commands, 'rm b.bin c.bin');
    expect(cleaned.workspaceFull).toBeUndefined();
  });

  it('stops a command that keeps writing, long before its wall clock', async () => {
    const workspace = await tempDir();
    const commands = await open(workspace, { workspaceMb: 4, commandTimeoutMs: 120_000 });
    const result = await run(
      commands,
      'i=0; while true; do i=$((i+1)); head -c 200000 /dev/urandom > part-$i.bin; done',
    );
    expect(result.stopped).toBe('workspace-full');
    expect(result.workspaceFull).toMatch(/^The workspace is over its disk limit/);
    expect(result.durationMs).toBeLessThan(60_000);
  });

  it('keeps any single file under the limit (a runaway write fails at once)', async () => {
    const workspace = await tempDir();
    const commands = await open(workspace, { workspaceMb: 1 });
    const result = await run(commands, 'head -c 5000000 /dev/zero > big.bin; echo "status $?"');
    expect(result.output).toMatch(/File size limit exceeded|status 1\d\d/);
    expect((await stat(path.join(workspace, 'big.bin'))).size).toBeLessThanOrEqual(1024 * 1024);
  });

  it('counts files and directories against workspaceFiles', async () => {
    const workspace = await tempDir();
    const commands = await open(workspace, { workspaceFiles: 20 });
    const result = await run(commands, 'mkdir many && touch many/f{1..40}');
    expect(result.exitCode).toBe(0);
    expect(result.workspaceFull).toBe(
      'The workspace is over its file limit: 41 files and directories of 20 (sandbox limit workspaceFiles); delete files (build output, caches, node_modules) to go on: nothing is checkpointed until it is back under.',
    );
  });

  it('commits no checkpoint while over, and commits again once back under', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const workspace = await repoWorkspace(root, repo, {
      hookSandbox: {
        mode: 'bubblewrap',
        policy: parseSandboxPolicy({ limits: { workspaceFiles: 30 } }),
      },
    });
    await workspace.prepare(null);
    for (let index = 0; index < 40; index += 1) {
      await writeFile(path.join(workspace.dir, `f${index}.txt`), `${index}\n`);
    }
    const refused = await workspace
      .checkpoint({ subject: 'over' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkspaceError);
    expect((refused as WorkspaceError).code).toBe('workspace_full');
    expect((refused as WorkspaceError).message).toMatch(
      /^The workspace is over its file limit: \d+ files and directories of 30/,
    );
    // Nothing reached the user's repository.
    expect(git(repo, 'branch', '--list', 'baton/p')).toBe('');
    for (let index = 1; index < 40; index += 1) {
      await rm(path.join(workspace.dir, `f${index}.txt`));
    }
    const saved = await workspace.checkpoint({ subject: 'under' });
    expect(saved.commit).not.toBeNull();
    expect(saved.pushed).toBe(true);
    expect(git(repo, 'show', 'baton/p:f0.txt')).toBe('0');
  });
});
