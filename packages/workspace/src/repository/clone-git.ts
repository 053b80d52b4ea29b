import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from '../errors.js';
import { type GitOutput, gitMessage, redactUrlCredentials, runGit } from './git.js';

/**
 * git on one project's clone: its working tree, Baton's git directory outside it, its branch and
 * remote. Every message it makes names neither host path (they reach the model).
 */
export class CloneGit {
  readonly dir: string;
  readonly gitDir: string;
  readonly branch: string;
  readonly remote: string;

  constructor(dir: string, gitDir: string, branch: string, remote: string) {
    this.dir = dir;
    this.gitDir = gitDir;
    this.branch = branch;
    this.remote = remote;
  }

  run(args: readonly string[], timeoutMs?: number): Promise<GitOutput> {
    return runGit(args, { gitDir: this.gitDir, workTree: this.dir, cwd: this.dir, timeoutMs });
  }

  /** Runs git with `input` on stdin; resolves with its output whatever the exit code. */
  withInput(args: readonly string[], input: string): Promise<GitOutput> {
    return runGit(args, { gitDir: this.gitDir, workTree: this.dir, cwd: this.dir, input });
  }

  /**
   * git's words with this clone's host paths replaced (`<git directory>`, `<workspace>`): they
   * reach the model and the project's status reason.
   */
  message(output: GitOutput): string {
    return gitMessage(output)
      .split(this.gitDir)
      .join('<git directory>')
      .split(this.dir)
      .join('<workspace>');
  }

  /** The remote as messages name it: credentials redacted. */
  get remoteName(): string {
    return redactUrlCredentials(this.remote);
  }

  async ok(args: readonly string[], what: string): Promise<string> {
    const output = await this.run(args);
    if (output.code !== 0) throw new WorkspaceError('git', `${what}: ${this.message(output)}`);
    return output.stdout;
  }

  async revParse(ref: string): Promise<string | null> {
    const output = await this.run(['rev-parse', '-q', '--verify', `${ref}^{commit}`]);
    return output.code === 0 ? output.stdout.trim() : null;
  }

  /**
   * The branch tip right after a commit: read from the loose ref the commit just wrote (one git
   * process fewer per checkpoint), else asked of git (a packed ref, another ref backend).
   */
  async branchTip(): Promise<string | null> {
    const loose = await readFile(
      path.join(this.gitDir, 'refs', 'heads', this.branch),
      'utf8',
    ).catch(() => '');
    const id = loose.trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(id) ? id : this.revParse('HEAD');
  }

  /**
   * `refs/heads/<branch>` of the remote, fetched into `refs/remotes/origin/<branch>`; `null` when
   * the remote has no such branch. Throws `repo_unreachable` when the fetch fails.
   */
  async fetchBranch(timeoutMs: number): Promise<string | null> {
    const tracking = `refs/remotes/origin/${this.branch}`;
    const fetched = await this.run(
      [
        'fetch',
        '-q',
        '--no-tags',
        // FETCH_HEAD would name the remote (a host path under BATON_HOME for a project without
        // --repo) to git inside the sandbox, which shows this directory read-only.
        '--no-write-fetch-head',
        'origin',
        `+refs/heads/${this.branch}:${tracking}`,
      ],
      timeoutMs,
    );
    if (fetched.code !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) {
        await this.run(['update-ref', '-d', tracking]);
        return null;
      }
      throw new WorkspaceError(
        'repo_unreachable',
        `cannot fetch ${this.branch} from ${this.remoteName}: ${this.message(fetched)}`,
      );
    }
    return this.revParse(tracking);
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.run(['merge-base', '--is-ancestor', ancestor, descendant])).code === 0;
  }

  /** Runs git with `paths` on stdin (NUL-separated: no E2BIG, whatever their number); returns its stderr. */
  async withPaths(
    args: readonly string[],
    paths: readonly string[],
    what: string,
  ): Promise<string> {
    if (paths.length === 0) return '';
    const output = await this.withInput(args, `${paths.join('\0')}\0`);
    if (output.code !== 0) throw new WorkspaceError('git', `${what}: ${this.message(output)}`);
    return output.stderr;
  }

  /** Path -> mode of every index entry. */
  async indexModes(): Promise<Map<string, string>> {
    const listed = await this.ok(['ls-files', '-z', '-s'], 'git ls-files');
    const modes = new Map<string, string>();
    for (const record of listed.split('\0')) {
      const tab = record.indexOf('\t');
      if (tab === -1) continue;
      modes.set(record.slice(tab + 1), record.slice(0, record.indexOf(' ')));
    }
    return modes;
  }

  /** Which of `paths` git's ignore rules exclude (tracked files never are). */
  async ignoredPaths(paths: readonly string[]): Promise<ReadonlySet<string>> {
    if (paths.length === 0) return new Set();
    const output = await this.withInput(['check-ignore', '-z', '--stdin'], `${paths.join('\0')}\0`);
    if (output.code !== 0 && output.code !== 1) {
      throw new WorkspaceError('git', `git check-ignore failed: ${this.message(output)}`);
    }
    return new Set(output.stdout.split('\0').filter(Boolean));
  }
}
