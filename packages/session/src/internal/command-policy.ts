import { existsSync } from 'node:fs';
import path from 'node:path';

/** Which commands the bash tool runs. A string matches a program name; a RegExp the whole command. */
export interface CommandPolicy {
  /** If set and non-empty, every program in the command must match one entry. Default: unset (all allowed). */
  allow?: ReadonlyArray<string | RegExp>;
  /**
   * Programs or patterns always refused; checked before `allow`. Default:
   * `SANDBOXED_DENIED_COMMANDS` in the sandbox, `DEFAULT_DENIED_COMMANDS` without it.
   */
  deny?: ReadonlyArray<string | RegExp>;
  /**
   * Absolute path prefixes a command may name besides the workspace, checked only when commands
   * are not sandboxed (in the sandbox, what a command can reach is what is mounted). Default:
   * `DEFAULT_ALLOWED_PATHS`.
   */
  allowedPaths?: readonly string[];
}

/** Where a command is about to run: the guard has less to do where the sandbox is the boundary. */
export interface CommandContext {
  /** True when the command runs in the bubblewrap sandbox; false for `--no-sandbox`. */
  sandboxed: boolean;
}

/** Commands that wipe the workspace: the sandbox lets them (the workspace is read-write). */
const WIPES_THE_WORKSPACE = [
  /\brm\s+(?:-\w+\s+)*\/(?:\*)?(?:\s|$|;|&|\|)/,
  /\brm\s+(?:-\w+\s+)*(?:~|\$HOME|\$\{HOME\})\/?(?:\*)?(?:\s|$|;|&|\|)/,
];

/** A fork bomb: without a cgroup it takes every process slot the worker's user has. */
const FORK_BOMB = /:\(\)\s*\{\s*:\|:&\s*\};:/;

/** Programs and patterns refused without the sandbox, unless a policy replaces `deny`. */
export const DEFAULT_DENIED_COMMANDS: ReadonlyArray<string | RegExp> = [
  'sudo',
  'su',
  'doas',
  'chroot',
  'shutdown',
  'reboot',
  'halt',
  'poweroff',
  'mkfs',
  'mount',
  'umount',
  'ssh',
  'scp',
  /\brm\s+(?:-\w+\s+)*\/(?:\s|$)/,
  FORK_BOMB,
];

/**
 * Patterns refused in the sandbox, unless a policy replaces `deny`: only mistakes the sandbox
 * lets through. Everything else (`sudo`, `mount`, reading `/etc`, writing `/tmp`, the network)
 * the sandbox answers itself, with the program's own error, or allows because it is harmless.
 */
export const SANDBOXED_DENIED_COMMANDS: ReadonlyArray<string | RegExp> = [
  ...WIPES_THE_WORKSPACE,
  FORK_BOMB,
];

/** System locations a command may name without the sandbox; everything else outside the workspace is refused. */
export const DEFAULT_ALLOWED_PATHS: readonly string[] = [
  '/dev/null',
  '/dev/stdin',
  '/dev/stdout',
  '/dev/stderr',
  '/usr/bin/',
  '/usr/local/bin/',
  '/bin/',
  '/usr/share/',
];

/** What the model is told when it tries to commit or push Baton's repository itself. */
export const BATON_COMMITS_REFUSAL =
  "Refused: Baton commits and pushes your changes itself at checkpoints (after turns that change files, and at the end of the session); git in the workspace is read-only. Leave the changes in the working tree: don't commit, push or stage. (A repository you make yourself, under /tmp or with `git init`, is yours to commit in.)";

const SEPARATORS = /\|\||&&|[;|&\n]|\$\(|`|\(|\)/;

function stripQuotes(token: string): string {
  return token.replace(/^['"]|['"]$/g, '');
}

function wordsOf(segment: string): string[] {
  return segment.trim().split(/\s+/).filter(Boolean).map(stripQuotes);
}

/** The program names a shell command runs (first word of each simple command). */
function programsOf(command: string): string[] {
  const programs: string[] = [];
  for (const segment of command.split(SEPARATORS)) {
    const words = wordsOf(segment);
    const first = words.find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
    if (first !== undefined && first !== '') programs.push(path.basename(first));
  }
  return programs;
}

/**
 * True when the command commits or pushes with git in the workspace's own repository: a `git
 * commit` or `git push` with no `cd`, `git -C`, `--git-dir` or `git init` anywhere in the command
 * (those point at a repository of the agent's own, which it may commit in).
 */
function commitsBatonsRepository(command: string): boolean {
  if (/(?:^|[\s;&|(])(?:cd|pushd)\s/.test(command) || /\bgit\s+init\b/.test(command)) return false;
  for (const segment of command.split(SEPARATORS)) {
    const words = wordsOf(segment).filter((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
    if (words[0] === undefined || path.basename(words[0]) !== 'git') continue;
    let index = 1;
    let elsewhere = false;
    while (index < words.length && words[index]?.startsWith('-') === true) {
      const option = words[index] ?? '';
      if (option === '-C' || option.startsWith('--git-dir') || option.startsWith('--work-tree')) {
        elsewhere = true;
      }
      // Options that take the next word as their value.
      index += option === '-C' || option === '-c' || option === '--git-dir' ? 2 : 1;
    }
    if (!elsewhere && (words[index] === 'commit' || words[index] === 'push')) return true;
  }
  return false;
}

function pathCandidates(command: string): string[] {
  const candidates: string[] = [];
  for (const raw of command.split(/[\s;|&()`]+/)) {
    const token = stripQuotes(raw.replace(/^\d*[<>]+&?/, ''));
    for (const part of [token, ...token.split('=').slice(1)]) {
      const cleaned = stripQuotes(part);
      if (cleaned.startsWith('/') || cleaned.startsWith('~') || /(^|\/)\.\.(\/|$)/.test(cleaned)) {
        candidates.push(cleaned);
      }
    }
  }
  return candidates;
}

function outsidePathRefusal(command: string, root: string, policy: CommandPolicy): string | null {
  const allowedPaths = policy.allowedPaths ?? DEFAULT_ALLOWED_PATHS;
  for (const candidate of pathCandidates(command)) {
    if (candidate.startsWith('~')) {
      return `Refused: ${candidate} is outside the workspace. Commands run in the workspace root; use relative paths.`;
    }
    const resolved = path.resolve(root, candidate);
    // `/api/users` in a grep pattern is not a host path: only names whose top-level directory
    // exists on this machine (/etc, /home, /tmp, ...) count, which keeps false refusals rare.
    const topLevel = resolved.split(path.sep).slice(0, 2).join(path.sep) || path.sep;
    if (path.isAbsolute(candidate) && !existsSync(topLevel)) continue;
    const inside = resolved === root || resolved.startsWith(root + path.sep);
    const system = allowedPaths.some(
      (prefix) => resolved === prefix || resolved.startsWith(prefix),
    );
    if (!inside && !system) {
      return `Refused: ${candidate} is outside the workspace. Commands run in the workspace root; use relative paths.`;
    }
  }
  return null;
}

/**
 * Check a command against the policy. Returns `null` when allowed, else a refusal for the model.
 * This is a guard against mistakes, not a boundary. In the sandbox (`context.sandboxed`) it
 * refuses only what the sandbox lets through and the model surely did not mean: wiping the
 * workspace, a fork bomb, committing or pushing Baton's repository. Without the sandbox it also
 * refuses names of paths outside the workspace and the system's tool directories.
 */
export function checkCommand(
  command: string,
  root: string,
  policy: CommandPolicy = {},
  context: CommandContext = { sandboxed: false },
): string | null {
  const deny =
    policy.deny ?? (context.sandboxed ? SANDBOXED_DENIED_COMMANDS : DEFAULT_DENIED_COMMANDS);
  const programs = programsOf(command);
  for (const rule of deny) {
    if (typeof rule === 'string' ? programs.includes(rule) : rule.test(command)) {
      return `Refused: the command policy does not allow ${typeof rule === 'string' ? `\`${rule}\`` : 'this command'} in the workspace shell.`;
    }
  }
  const allow = policy.allow;
  if (allow !== undefined && allow.length > 0) {
    for (const program of programs) {
      const allowed = allow.some((rule) =>
        typeof rule === 'string' ? rule === program : rule.test(command),
      );
      if (!allowed)
        return `Refused: the command policy does not allow \`${program}\` in the workspace shell.`;
    }
  }
  if (commitsBatonsRepository(command)) return BATON_COMMITS_REFUSAL;
  return context.sandboxed ? null : outsidePathRefusal(command, root, policy);
}
