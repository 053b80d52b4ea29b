/**
 * Which repositories and workspaces a new project may name: the one policy the control API
 * applies before it touches the file system or the network for a `repo` or a `workspace`.
 *
 * Rules, in order:
 * 1. A remote `repo` (a URL or `user@host:path`) must use https, http, ssh or git and name a host
 *    of `repoHosts` (`*` allows any host). Loopback, private and link-local addresses and
 *    `localhost` are refused unless listed by name, even with `*`: a client must not make the
 *    server contact its own machine's services. Nothing is contacted before this check.
 * 2. A local `repo` (a path or `file://`) must resolve, symlinks followed, inside one of
 *    `repoRoots`. Whether it is missing, unreadable, outside the roots through a symlink or not a
 *    repository, the answer is the same sentence (`CANNOT_READ`): a client learns nothing about
 *    the server's file system.
 * 3. A `workspace` must be a directory strictly under `workspaceRoot` (symlinks followed).
 *
 * `'any'` lifts a rule: the CLI acting for the user on their own machine leaves the roots open
 * unless its environment sets them; the dashboard, which acts for network clients, starts
 * closed (`sourcePolicyFromEnvironment(env, { served: true, home })`).
 */
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { WorkspaceError, isRemoteUrl, normalizeRepo } from '@baton/workspace';
import { ProjectError } from './errors.js';

/** The environment variables of the policy. */
export const SOURCE_POLICY_ENV = {
  /** Comma-separated repository hosts (`github.com,git.example.com`), or `*` for any. */
  repoHosts: 'BATON_REPO_HOSTS',
  /** Local repository roots, separated by `path.delimiter` (`:`), or `*` for anywhere. */
  repoRoots: 'BATON_REPO_ROOTS',
  /** The directory every `workspace` must be under, or `*` for anywhere. */
  workspaceRoot: 'BATON_WORKSPACE_ROOT',
} as const;

export interface SourcePolicyOptions {
  /** Hosts a remote repository may be on; `'any'` (from `*`) for every public host. */
  repoHosts: readonly string[] | 'any';
  /**
   * With `repoHosts: 'any'`, also this machine and its network (loopback, private addresses,
   * `localhost`). Default false; true only for the CLI's open default.
   */
  allowInternalHosts?: boolean | undefined;
  /** Directories a local repository must be inside; `'any'` for anywhere. */
  repoRoots: readonly string[] | 'any';
  /** The directory a workspace must be under; `'any'` for anywhere. */
  workspaceRoot: string | 'any';
}

export interface SourcePolicy extends Readonly<SourcePolicyOptions> {
  /**
   * Refuses (ProjectError `invalid_input`) a `repo` or `workspace` this policy does not allow.
   * Relative paths resolve against `cwd`.
   */
  check(
    input: { repo?: string | undefined; workspace?: string | undefined },
    cwd: string,
  ): Promise<void>;
  /** The message a failure to resolve `repo` reaches the client with. */
  describeRepoFailure(repo: string, error: WorkspaceError): string;
}

/** One sentence whatever kept a local repository from being read. */
export function cannotRead(repo: string): string {
  return `cannot read repository ${repo}: it does not exist, is not readable here, is outside the allowed roots or is not a git repository`;
}

const REMOTE_SCHEMES = new Set(['https:', 'http:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:']);

/** The host a remote repository names, or null when it names none we can check. */
function remoteHost(repo: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repo)) {
    try {
      const url = new URL(repo);
      if (!REMOTE_SCHEMES.has(url.protocol)) return null;
      return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    } catch {
      return null;
    }
  }
  // scp-like: [user@]host:path (a `::` transport such as ext:: is not one).
  const match = /^(?:[^@/:]+@)?([^@/:]+):(?!:)/.exec(repo);
  return match?.[1]?.toLowerCase() ?? null;
}

/** Loopback, private, link-local, unspecified or CGNAT: this machine or its network. */
export function isInternalHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const version = isIP(host);
  if (version === 4) {
    const [a = 0, b = 0] = host.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168)
    );
  }
  if (version === 6) {
    const lower = host.toLowerCase();
    // IPv4-mapped addresses only ever name a host by a detour.
    if (lower.startsWith('::ffff:')) return true;
    return (
      lower === '::' ||
      lower === '::1' ||
      lower.startsWith('fc') ||
      lower.startsWith('fd') ||
      lower.startsWith('fe8') ||
      lower.startsWith('fe9') ||
      lower.startsWith('fea') ||
      lower.startsWith('feb')
    );
  }
  return false;
}

/** `target` is `root` itself (when `orSame`) or below it. */
function isInside(root: string, target: string, orSame: boolean): boolean {
  const relative = path.relative(root, target);
  if (relative === '') return orSame;
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** The real path of `target`, or of its deepest existing ancestor with the rest appended. */
async function realPathOf(target: string): Promise<string> {
  const rest: string[] = [];
  let current = target;
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return target;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

function refuse(message: string): never {
  throw new ProjectError('invalid_input', message);
}

export function createSourcePolicy(options: SourcePolicyOptions): SourcePolicy {
  const hosts =
    options.repoHosts === 'any'
      ? 'any'
      : new Set(options.repoHosts.map((host) => host.toLowerCase()));

  async function checkRepo(repo: string, cwd: string): Promise<void> {
    let normalized: string;
    try {
      normalized = normalizeRepo(repo, cwd);
    } catch (error) {
      if (error instanceof WorkspaceError) refuse(error.message);
      throw error;
    }
    if (isRemoteUrl(normalized)) {
      const host = remoteHost(normalized);
      if (host === null) {
        refuse(`repo ${repo}: only https, http, ssh and git repository URLs are accepted`);
      }
      const listed = hosts !== 'any' && hosts.has(host);
      const internalAllowed = options.allowInternalHosts === true;
      if (!listed && (hosts !== 'any' || (!internalAllowed && isInternalHost(host)))) {
        refuse(
          `repo ${repo}: host ${host} is not an allowed repository host (${SOURCE_POLICY_ENV.repoHosts})`,
        );
      }
      return;
    }
    if (options.repoRoots === 'any') return;
    const local = normalized.toLowerCase().startsWith('file://')
      ? decodeURIComponent(new URL(normalized).pathname)
      : path.resolve(cwd, normalized);
    const roots = options.repoRoots.map((root) => path.resolve(root));
    if (!roots.some((root) => isInside(root, local, true))) {
      refuse(`repo ${repo}: local repositories must be under ${SOURCE_POLICY_ENV.repoRoots}`);
    }
    // Past the lexical check, every failure reads the same.
    try {
      const real = await realpath(local);
      const realRoots = await Promise.all(roots.map(realPathOf));
      if (!realRoots.some((root) => isInside(root, real, true))) refuse(cannotRead(repo));
      if (!(await stat(real)).isDirectory()) refuse(cannotRead(repo));
      await access(real, constants.R_OK | constants.X_OK);
    } catch (error) {
      if (error instanceof ProjectError) throw error;
      refuse(cannotRead(repo));
    }
  }

  async function checkWorkspace(workspace: string, cwd: string): Promise<void> {
    if (options.workspaceRoot === 'any') return;
    const root = await realPathOf(path.resolve(options.workspaceRoot));
    const target = await realPathOf(path.resolve(cwd, workspace));
    if (!isInside(root, target, false)) {
      refuse(
        `workspace ${workspace}: a workspace must be a directory under the workspace root (${SOURCE_POLICY_ENV.workspaceRoot})`,
      );
    }
  }

  return {
    ...options,
    async check(input, cwd) {
      if (input.workspace !== undefined) await checkWorkspace(input.workspace, cwd);
      if (input.repo !== undefined) await checkRepo(input.repo, cwd);
    },
    describeRepoFailure(repo, error) {
      // Open roots: the user's own machine, the precise reason helps. Closed: one sentence.
      if (options.repoRoots === 'any' || isRemoteUrl(repo)) return error.message;
      return error.code === 'repo_unreachable' ||
        /not a git repository|cannot read|does not appear/i.test(error.message)
        ? cannotRead(repo)
        : error.message;
    },
  };
}

/** Splits a list variable; `*` alone means any. */
function listFrom(
  value: string | undefined,
  separator: string,
): readonly string[] | 'any' | undefined {
  const trimmed = value?.trim();
  if (trimmed === undefined || trimmed === '') return undefined;
  if (trimmed === '*') return 'any';
  return trimmed
    .split(separator)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

export interface SourcePolicyDefaults {
  /**
   * True for a server acting for network clients (the dashboard): unset variables then mean
   * no remote host, no local repository and workspaces only under `home`. False (the CLI): unset
   * variables mean no restriction (the user's own machine and rights).
   */
  served: boolean;
  /** `BATON_HOME`: the default workspace root of a served policy. */
  home: string;
}

/** The policy `BATON_REPO_HOSTS`, `BATON_REPO_ROOTS` and `BATON_WORKSPACE_ROOT` describe. */
export function sourcePolicyFromEnvironment(
  env: NodeJS.ProcessEnv,
  defaults: SourcePolicyDefaults,
): SourcePolicy {
  const workspaceRoot = env[SOURCE_POLICY_ENV.workspaceRoot]?.trim();
  const repoHosts = listFrom(env[SOURCE_POLICY_ENV.repoHosts], ',');
  return createSourcePolicy({
    repoHosts: repoHosts ?? (defaults.served ? [] : 'any'),
    // The CLI with nothing set behaves as git does for the user: any host, their own included.
    allowInternalHosts: repoHosts === undefined && !defaults.served,
    repoRoots:
      listFrom(env[SOURCE_POLICY_ENV.repoRoots], path.delimiter) ?? (defaults.served ? [] : 'any'),
    workspaceRoot:
      workspaceRoot === '*'
        ? 'any'
        : workspaceRoot !== undefined && workspaceRoot !== ''
          ? workspaceRoot
          : defaults.served
            ? defaults.home
            : 'any',
  });
}
