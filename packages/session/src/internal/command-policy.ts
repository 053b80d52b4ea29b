import { existsSync } from 'node:fs';
import path from 'node:path';

/** Which commands the bash tool runs. A string matches a program name; a RegExp the whole command. */
export interface CommandPolicy {
  /** If set and non-empty, every program in the command must match one entry. Default: unset (all allowed). */
  allow?: ReadonlyArray<string | RegExp>;
  /** Programs or patterns always refused; checked before `allow`. Default: `DEFAULT_DENIED_COMMANDS`. */
  deny?: ReadonlyArray<string | RegExp>;
  /** Absolute path prefixes a command may name besides the workspace. Default: `DEFAULT_ALLOWED_PATHS`. */
  allowedPaths?: readonly string[];
}

/** Programs and patterns refused unless a policy replaces `deny`. */
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
  /:\(\)\s*\{\s*:\|:&\s*\};:/,
];

/** System locations a command may name (tools and devices); everything else outside the workspace is refused. */
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

const SEPARATORS = /\|\||&&|[;|&\n]|\$\(|`|\(|\)/;

function stripQuotes(token: string): string {
  return token.replace(/^['"]|['"]$/g, '');
}

/** The program names a shell command runs (first word of each simple command). */
export function programsOf(command: string): string[] {
  const programs: string[] = [];
  for (const segment of command.split(SEPARATORS)) {
    const words = segment.trim().split(/\s+/).filter(Boolean).map(stripQuotes);
    const first = words.find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
    if (first !== undefined && first !== '') programs.push(path.basename(first));
  }
  return programs;
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

/**
 * Check a command against the policy. Returns `null` when allowed, else a refusal for the model.
 * This is a guard against mistakes, not a sandbox: run untrusted agents in a container too.
 */
export function checkCommand(
  command: string,
  root: string,
  policy: CommandPolicy = {},
): string | null {
  const deny = policy.deny ?? DEFAULT_DENIED_COMMANDS;
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
