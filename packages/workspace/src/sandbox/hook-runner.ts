import { access, constants, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SANDBOX_GIT_DIR, SANDBOX_GIT_OBJECTS, SANDBOX_HOOKS_DIR } from './bubblewrap.js';
import type { CommandSandbox, SandboxSetup } from './command-sandbox.js';
import { openSandbox } from './open-sandbox.js';
import { DEFAULT_SANDBOX_POLICY } from './policy.js';
import { prepareHookGit } from './sandbox-git.js';

/** The hooks a commit runs, in the order git runs them. */
type CommitHookName = 'pre-commit' | 'prepare-commit-msg' | 'commit-msg' | 'post-commit';

/** Options of `runCommitHooks`. */
export interface RunCommitHooksOptions {
  /** Realpath of the workspace: the hooks' working directory, read-write as for commands. */
  workspace: string;
  /** Baton's git directory of the workspace: hooks see a scratch copy, never the directory. */
  gitDir: string;
  /** The repository's hooks directory on the host: hooks see it read-only. */
  hooksDir: string;
  /** The session's sandbox: the same policy (network, limits) as the agent's commands. */
  setup: SandboxSetup;
  /** The commit message the hooks may read and edit (`prepare-commit-msg`, `commit-msg`). */
  message: string;
}

/** What the hooks before a commit said; `finish` runs `post-commit` (after a commit) and cleans up. */
export type CommitHooksResult =
  | {
      outcome: 'passed';
      /** The message after `prepare-commit-msg` and `commit-msg` (at most 64 KiB). */
      message: string;
      finish(committed: boolean): Promise<void>;
    }
  | {
      outcome: 'refused';
      hook: CommitHookName;
      /** What the hook printed (stdout and stderr, at most 64 KiB), or why it could not run. */
      output: string;
      finish(committed: boolean): Promise<void>;
    };

const OUTPUT_LIMIT = 64 * 1024;

function quote(argument: string): string {
  return `'${argument.replaceAll("'", "'\\''")}'`;
}

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * husky 9 points `core.hooksPath` at `.husky/_`, whose stubs run `../<hook>`: the hooks are
 * the whole `.husky` directory, so that is what is shown.
 */
function hooksMount(hooksDir: string): { mount: string; under: string } {
  const parent = path.dirname(hooksDir);
  if (path.basename(hooksDir) === '_' && path.basename(parent) === '.husky') {
    return { mount: parent, under: '_' };
  }
  return { mount: hooksDir, under: '' };
}

/**
 * Runs a checkpoint's commit hooks the way `git commit` would (`pre-commit`, then
 * `prepare-commit-msg <file> message`, then `commit-msg <file>`; `post-commit` from `finish`),
 * each at the top of the working tree, but inside the session's sandbox (`setup`): the
 * workspace read-write, the hooks directory read-only, no network unless the project allows
 * hosts, the same limits and wall clock per hook, the sandbox's clean environment (`HOME` is the
 * workspace). Git inside works on a scratch copy of Baton's refs and index over Baton's objects
 * (read-only), so a hook may stage, stash or commit there and nothing of it reaches Baton's
 * repository, its configuration or its hooks; the caller commits on the host without hooks.
 * With the sandbox off (`--no-sandbox`) the hooks run on the host with the same clean
 * environment and scratch git directory. Never throws: a sandbox that cannot open refuses.
 */
export async function runCommitHooks(options: RunCommitHooksOptions): Promise<CommitHooksResult> {
  const { workspace, gitDir, hooksDir, setup } = options;
  const sandboxed = setup.mode === 'bubblewrap';
  const { mount, under } = hooksMount(hooksDir);
  let privateDir: string | undefined;
  let hostScratch: string | undefined;
  let commands: CommandSandbox | undefined;
  const cleanup = async () => {
    await commands?.dispose();
    if (hostScratch !== undefined) await rm(hostScratch, { recursive: true, force: true });
  };
  const refuse = (hook: CommitHookName, output: string): CommitHooksResult => ({
    outcome: 'refused',
    hook,
    output,
    finish: cleanup,
  });
  try {
    if (sandboxed) {
      commands = await openSandbox({
        workspace,
        setup,
        hooks: mount,
        prepareGit: async (into) => {
          privateDir = into;
          return prepareHookGit(gitDir, into, SANDBOX_GIT_OBJECTS);
        },
      });
    } else {
      hostScratch = await mkdtemp(path.join(os.tmpdir(), 'baton-hooks-'));
      await prepareHookGit(gitDir, hostScratch, path.join(gitDir, 'objects'));
      privateDir = hostScratch;
      commands = await openSandbox({ workspace, setup });
    }
  } catch {
    await cleanup();
    return refuse(
      'pre-commit',
      'the hooks could not run: commands cannot be sandboxed on this worker',
    );
  }
  const opened = commands;
  const scratchGit = path.join(privateDir ?? '', 'git');
  const gitInside = sandboxed ? SANDBOX_GIT_DIR : scratchGit;
  const messageFile = path.join(scratchGit, 'COMMIT_EDITMSG');
  const messageInside = path.posix.join(gitInside, 'COMMIT_EDITMSG');
  await writeFile(messageFile, options.message);
  const env: Record<string, string> = { GIT_EDITOR: ':', GIT_DIR: gitInside };
  if (!sandboxed) env.GIT_WORK_TREE = workspace;
  const policy = setup.policy ?? DEFAULT_SANDBOX_POLICY;

  /** Runs one hook; `null` when the repository has none by that name. */
  const run = async (
    hook: CommitHookName,
    args: string[],
  ): Promise<{ ok: boolean; output: string } | null> => {
    if (!(await executable(path.join(hooksDir, hook)))) return null;
    const file = sandboxed
      ? path.posix.join(SANDBOX_HOOKS_DIR, under, hook)
      : path.join(hooksDir, hook);
    let output = '';
    const result = await opened.run([file, ...args].map(quote).join(' '), {
      env,
      onOutput: (chunk) => {
        if (output.length < OUTPUT_LIMIT) output += chunk.slice(0, OUTPUT_LIMIT - output.length);
      },
    });
    if (result.startError !== undefined) {
      return { ok: false, output: `the ${hook} hook could not start: ${result.startError}` };
    }
    if (result.stopped === 'timeout') {
      const seconds = Math.round(policy.limits.commandTimeoutMs / 1000);
      return { ok: false, output: `the ${hook} hook timed out after ${seconds} s\n${output}` };
    }
    return { ok: result.exitCode === 0, output };
  };

  const steps: Array<[CommitHookName, string[]]> = [
    ['pre-commit', []],
    ['prepare-commit-msg', [messageInside, 'message']],
    ['commit-msg', [messageInside]],
  ];
  for (const [hook, args] of steps) {
    const ran = await run(hook, args);
    if (ran !== null && !ran.ok) return refuse(hook, ran.output);
  }
  const edited = await readFile(messageFile, 'utf8').catch(() => options.message);
  return {
    outcome: 'passed',
    message: edited.slice(0, OUTPUT_LIMIT),
    async finish(committed) {
      try {
        if (committed) {
          // The commit was made on the host after the scratch copy: show it to post-commit.
          await prepareHookGit(
            gitDir,
            privateDir ?? '',
            sandboxed ? SANDBOX_GIT_OBJECTS : path.join(gitDir, 'objects'),
          );
          // Its exit status changes nothing, as with git.
          await run('post-commit', []);
        }
      } finally {
        await cleanup();
      }
    },
  };
}
