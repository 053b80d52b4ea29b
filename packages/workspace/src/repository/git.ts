import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

/** What one git command printed and how it exited. */
export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
  /** True when the command was killed for running longer than its timeout. */
  timedOut: boolean;
  /**
   * How a failed command ended, in words without host paths ("exit status 1", "killed by
   * SIGSEGV", "could not start git: EAGAIN"): what a message says when git printed nothing.
   */
  ended?: string | undefined;
}

/** Where and how a git command runs. */
export interface GitRunOptions {
  /** Working directory of the process. Default: the current directory. */
  cwd?: string | undefined;
  /**
   * Baton's git directory of a workspace, passed as `--git-dir` so a `.git` the agent wrote in
   * the working tree is never read.
   */
  gitDir?: string | undefined;
  /** The working tree that goes with `gitDir` (`--work-tree`). */
  workTree?: string | undefined;
  /** Kill the command after this long (ms). Default 120_000. */
  timeoutMs?: number | undefined;
  /** Extra environment entries (added to the filtered worker environment). */
  env?: Record<string, string> | undefined;
  /** Written to the command's stdin (paths for `--pathspec-from-file=-`, `--stdin`). */
  input?: string | undefined;
}

/**
 * Environment entries git may see. Everything else of the worker (API keys, Redis URLs, tokens)
 * stays out, so hooks and credential helpers get the worker's git setup and nothing more.
 */
const PASSED_ENV = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'TZ',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'XDG_RUNTIME_DIR',
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_CONFIG_GLOBAL',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'GNUPGHOME',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
]);

/**
 * Settings given to every git Baton runs on the host, after every configuration file: nothing that
 * runs a program or reads a helper on the agent's files. `core.fsmonitor` runs a command on every
 * `add`/`diff`/`status`; the untracked cache trusts stat data the agent controls; `ext::` remotes
 * run commands. (Hooks are chosen per command by the checkpoint code.)
 */
const HOST_GIT_SETTINGS: readonly string[] = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.untrackedCache=false',
  '-c',
  'protocol.ext.allow=never',
];

/**
 * The worker environment git runs with: the allow-list above plus `GIT_CONFIG_COUNT`/`KEY`/`VALUE`
 * entries (the operator's settings, credential helpers included). No system configuration is read
 * (`GIT_CONFIG_NOSYSTEM=1`), and the global one is the operator's `GIT_CONFIG_GLOBAL` file when
 * set, else none (`/dev/null`): `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config` are files a
 * process on the host could have written, and git runs what they name (fsmonitor, filters).
 */
export function gitEnvironment(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (PASSED_ENV.has(key) || /^GIT_CONFIG_(?:COUNT|KEY_\d+|VALUE_\d+)$/.test(key)) {
      env[key] = value;
    }
  }
  env.GIT_CONFIG_NOSYSTEM = '1';
  if (env.GIT_CONFIG_GLOBAL === undefined || env.GIT_CONFIG_GLOBAL === '') {
    env.GIT_CONFIG_GLOBAL = '/dev/null';
  }
  // Never wait for a password on a terminal nobody watches; messages in one language to parse.
  env.GIT_TERMINAL_PROMPT = '0';
  env.LC_ALL = 'C';
  return env;
}

/** What a git command "prints" when there is no git to run. */
const GIT_MISSING = 'git is not installed (on Debian: apt-get install git)';

/** Runs `git` with `args`; resolves with its output whatever the exit code. */
export function runGit(args: readonly string[], options: GitRunOptions = {}): Promise<GitOutput> {
  const location: string[] = [];
  if (options.gitDir !== undefined) location.push(`--git-dir=${options.gitDir}`);
  if (options.workTree !== undefined) location.push(`--work-tree=${options.workTree}`);
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      [...location, ...HOST_GIT_SETTINGS, ...args],
      {
        cwd: options.cwd,
        maxBuffer: 64 * 1024 * 1024,
        timeout: options.timeoutMs ?? 120_000,
        killSignal: 'SIGKILL',
        env: { ...gitEnvironment(), ...options.env },
      },
      (error, stdout, stderr) => {
        const failure = error as
          (NodeJS.ErrnoException & { killed?: boolean; signal?: string }) | null;
        const code = failure === null ? 0 : typeof failure.code === 'number' ? failure.code : 128;
        // No git on PATH (a fresh machine): say so, not the bare "git failed" of an empty stderr.
        // (spawn says ENOENT for a missing working directory too.)
        const missing =
          failure?.code === 'ENOENT' &&
          failure.syscall?.startsWith('spawn') === true &&
          (options.cwd === undefined || existsSync(options.cwd));
        resolve({
          code,
          stdout,
          stderr: missing ? GIT_MISSING : stderr,
          timedOut: failure?.killed === true && failure.signal === 'SIGKILL',
          ended: failure === null ? undefined : howItEnded(failure),
        });
      },
    );
    // A command that exits before reading all of it closes stdin: its exit code tells.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** A failed run in words from its exit status, signal or errno only (never its command line). */
function howItEnded(failure: NodeJS.ErrnoException & { signal?: string | null }): string {
  if (typeof failure.code === 'number') return `exit status ${failure.code}`;
  if (typeof failure.signal === 'string') return `killed by ${failure.signal}`;
  if (typeof failure.code === 'string' && /^[A-Z0-9_]+$/.test(failure.code)) {
    return failure.syscall?.startsWith('spawn') === true
      ? `could not start git: ${failure.code}`
      : failure.code;
  }
  return 'no exit status';
}

/** `user:password@` in URLs replaced, so a message never carries a credential. */
export function redactUrlCredentials(text: string): string {
  // Anchored and bounded like the `url_credentials` rule of @baton/core: linear in `text`.
  return text.replace(/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}:\/\/)[^/\s@]{1,512}@/gi, '$1***@');
}

/**
 * The first meaningful line of git's stderr (without `fatal: ` / `error: `), credentials redacted;
 * when git printed none, how it ended ("git failed (killed by SIGSEGV)").
 */
export function gitMessage(output: GitOutput, fallback = 'git failed'): string {
  if (output.timedOut) return 'git timed out';
  const line = output.stderr
    .split('\n')
    .map((text) => text.trim())
    .find((text) => text !== '' && !/^(?:hint|warning):/i.test(text));
  const ended = output.ended === undefined ? fallback : `${fallback} (${output.ended})`;
  const message = (line ?? ended).replace(/^(?:fatal|error):\s*/i, '');
  return redactUrlCredentials(message).slice(0, 300);
}

/** What the remote's hooks printed (`remote: ...` lines), redacted, at most 300 characters. */
export function remoteMessage(stderr: string): string {
  const said = stderr
    .split('\n')
    .filter((line) => line.startsWith('remote:'))
    // The remote's text reaches terminals and logs: no control characters.
    .map((line) =>
      line
        .slice('remote:'.length)
        // eslint-disable-next-line no-control-regex -- removing them is the point
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .trim(),
    )
    .filter((line) => line !== '')
    .join('; ');
  return redactUrlCredentials(said).slice(0, 300);
}
