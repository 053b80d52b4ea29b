import type { MemoryStore } from '@baton/core';
import { type GitOutput, gitMessage, remoteMessage, runGit } from './git.js';
import {
  MAX_SNAPSHOT_FILES,
  MEMORY_SNAPSHOT_FILES,
  MEMORY_SNAPSHOT_FORMAT,
  MEMORY_SNAPSHOT_MANIFEST,
  type MemoryFile,
  type MemorySnapshotManifest,
  type WithheldMemoryFile,
  memorySnapshotRef,
  screenMemoryFiles,
} from './memory-snapshot-format.js';

/** Options of `MemorySnapshotWriter`. */
export interface MemorySnapshotWriterOptions {
  /** Baton's git directory of the project's clone; its remote `origin` receives the snapshots. */
  gitDir: string;
  projectId: string;
  /** Longest wait for one fetch or push (ms). Default 120_000. */
  networkTimeoutMs?: number | undefined;
  /** Asked right before every push; a reason refuses it (the lease moved on). */
  mayPush?: (() => Promise<string | undefined>) | undefined;
}

/** What one snapshot is made of. */
export interface MemorySnapshotInput {
  files: readonly MemoryFile[];
  goal: string;
  sessionNumber: number;
  /** The session lease's fencing token; `null` without a lease (`baton run`). */
  fenceToken: number | null;
}

/** What `MemorySnapshotWriter.write` did. */
export interface MemorySnapshotResult {
  /** The snapshot commit now on the ref (the previous one when nothing changed); `null`: none. */
  commit: string | null;
  /** True when `commit` is on the remote. */
  pushed: boolean;
  /** True when memory, withheld list and goal equal the previous snapshot's: nothing written. */
  unchanged: boolean;
  /** Files kept out of the snapshot (paths and reasons only). */
  withheld: WithheldMemoryFile[];
  /** Why the snapshot was not written or pushed. */
  error?: string;
}

/** Who snapshot commits are made by (the tree never enters a user's branch). */
const SNAPSHOT_IDENTITY: Record<string, string> = {
  GIT_AUTHOR_NAME: 'Baton',
  GIT_AUTHOR_EMAIL: 'baton@localhost',
  GIT_COMMITTER_NAME: 'Baton',
  GIT_COMMITTER_EMAIL: 'baton@localhost',
};

/** Every file of a memory store (hidden ones too), read through the `MemoryStore` interface. */
export async function collectMemoryFiles(store: MemoryStore): Promise<MemoryFile[]> {
  const entries = await store.list('', { depth: 64, skipHidden: false });
  const files: MemoryFile[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'file') continue;
    const content = await store.read(entry.path);
    if (content !== null) files.push({ path: entry.path, content });
  }
  return files;
}

/**
 * Writes snapshots of a project's memory as commits on `refs/baton/memory/<id>` of its clone
 * and pushes them to the remote, with git plumbing only (`hash-object`, `mktree`, `commit-tree`):
 * no working tree, index or branch is read or changed. Never force-pushes: a snapshot is the child
 * of the remote's latest one, fetched once per writer (and again after a rejection).
 */
export class MemorySnapshotWriter {
  readonly #options: MemorySnapshotWriterOptions;
  readonly #ref: string;
  /** The snapshot on the remote as this writer knows it; `undefined`: not fetched yet. */
  #parent: string | null | undefined;

  constructor(options: MemorySnapshotWriterOptions) {
    this.#options = options;
    this.#ref = memorySnapshotRef(options.projectId);
  }

  async write(input: MemorySnapshotInput): Promise<MemorySnapshotResult> {
    const { kept, withheld } = screenMemoryFiles(input.files);
    try {
      const filesTree = await this.#filesTree(kept);
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        if (this.#parent === undefined) this.#parent = await this.#fetchRemote();
        const parent = this.#parent;
        if (
          parent !== null &&
          (await this.#sameAsParent(parent, filesTree, withheld, input.goal))
        ) {
          return { commit: parent, pushed: true, unchanged: true, withheld };
        }
        const manifest: MemorySnapshotManifest = {
          format: MEMORY_SNAPSHOT_FORMAT,
          projectId: this.#options.projectId,
          goal: input.goal,
          sessionNumber: input.sessionNumber,
          fenceToken: input.fenceToken,
          createdAt: new Date().toISOString(),
          files: kept.map((file) => file.path),
          withheld,
        };
        const commit = await this.#commit(filesTree, manifest, parent);
        const refused = await this.#options.mayPush?.();
        if (refused !== undefined) {
          return { commit: null, pushed: false, unchanged: false, withheld, error: refused };
        }
        const pushed = await this.#push(commit);
        if (pushed === 'ok') {
          this.#parent = commit;
          await this.#git(['update-ref', this.#ref, commit]);
          return { commit, pushed: true, unchanged: false, withheld };
        }
        if (pushed !== 'rejected') {
          const error = withoutGitDir(pushed, this.#options.gitDir);
          return { commit, pushed: false, unchanged: false, withheld, error };
        }
        // Another writer moved the ref since it was fetched: build on its snapshot instead.
        this.#parent = undefined;
      }
      return {
        commit: null,
        pushed: false,
        unchanged: false,
        withheld,
        error: `the remote refused ${this.#ref} twice as not a fast-forward`,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const error_ = withoutGitDir(message, this.#options.gitDir);
      return { commit: null, pushed: false, unchanged: false, withheld, error: error_ };
    }
  }

  /** The remote's latest snapshot (fetched into the clone's own ref), or `null` when it has none. */
  async #fetchRemote(): Promise<string | null> {
    const fetched = await runGit(
      ['fetch', '-q', '--no-tags', 'origin', `+${this.#ref}:${this.#ref}`],
      { gitDir: this.#options.gitDir, timeoutMs: this.#options.networkTimeoutMs ?? 120_000 },
    );
    if (fetched.code !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) {
        await runGit(['update-ref', '-d', this.#ref], { gitDir: this.#options.gitDir });
        return null;
      }
      throw new Error(`cannot fetch ${this.#ref}: ${gitMessage(fetched)}`);
    }
    const head = await runGit(['rev-parse', '-q', '--verify', `${this.#ref}^{commit}`], {
      gitDir: this.#options.gitDir,
    });
    return head.code === 0 ? head.stdout.trim() : null;
  }

  /** The `memories` tree of `files`, built from blobs and nested `mktree`s. */
  async #filesTree(files: readonly MemoryFile[]): Promise<string> {
    if (files.length > MAX_SNAPSHOT_FILES) throw new Error('too many memory files');
    interface Folder {
      files: Map<string, string>;
      folders: Map<string, Folder>;
    }
    const root: Folder = { files: new Map(), folders: new Map() };
    for (const file of files) {
      const names = file.path.split('/');
      const base = names.pop() ?? '';
      let folder = root;
      for (const name of names) {
        let next = folder.folders.get(name);
        if (next === undefined) {
          next = { files: new Map(), folders: new Map() };
          folder.folders.set(name, next);
        }
        folder = next;
      }
      const blob = await this.#git(['hash-object', '-w', '--stdin'], file.content);
      folder.files.set(base, blob.trim());
    }
    const build = async (folder: Folder): Promise<string> => {
      const lines: string[] = [];
      for (const [name, blob] of folder.files) lines.push(`100644 blob ${blob}\t${name}`);
      for (const [name, child] of folder.folders)
        lines.push(`040000 tree ${await build(child)}\t${name}`);
      return (await this.#git(['mktree', '-z'], lines.map((line) => `${line}\0`).join(''))).trim();
    };
    return build(root);
  }

  /** True when `parent` holds the same files tree, withheld list and goal. */
  async #sameAsParent(
    parent: string,
    filesTree: string,
    withheld: readonly WithheldMemoryFile[],
    goal: string,
  ): Promise<boolean> {
    const tree = await runGit(
      ['rev-parse', '-q', '--verify', `${parent}:${MEMORY_SNAPSHOT_FILES}`],
      {
        gitDir: this.#options.gitDir,
      },
    );
    if (tree.code !== 0 || tree.stdout.trim() !== filesTree) return false;
    const manifest = await runGit(['cat-file', 'blob', `${parent}:${MEMORY_SNAPSHOT_MANIFEST}`], {
      gitDir: this.#options.gitDir,
    });
    if (manifest.code !== 0) return false;
    try {
      const previous = JSON.parse(manifest.stdout) as Partial<MemorySnapshotManifest>;
      return (
        previous.goal === goal && JSON.stringify(previous.withheld) === JSON.stringify(withheld)
      );
    } catch {
      return false;
    }
  }

  async #commit(
    filesTree: string,
    manifest: MemorySnapshotManifest,
    parent: string | null,
  ): Promise<string> {
    const manifestBlob = (
      await this.#git(['hash-object', '-w', '--stdin'], `${JSON.stringify(manifest, null, 2)}\n`)
    ).trim();
    const tree = (
      await this.#git(
        ['mktree', '-z'],
        `100644 blob ${manifestBlob}\t${MEMORY_SNAPSHOT_MANIFEST}\u0000040000 tree ${filesTree}\t${MEMORY_SNAPSHOT_FILES}\0`,
      )
    ).trim();
    const message =
      `baton: memory snapshot of ${manifest.projectId} after session ${manifest.sessionNumber}\n\n` +
      `Baton-Project: ${manifest.projectId}\n`;
    const output = await runGit(
      ['commit-tree', tree, ...(parent === null ? [] : ['-p', parent]), '-F', '-'],
      { gitDir: this.#options.gitDir, env: SNAPSHOT_IDENTITY, input: message },
    );
    return check(output, 'git commit-tree').trim();
  }

  /** One push of `commit` to the snapshot ref: `ok`, `rejected` (not a fast-forward) or why not. */
  async #push(commit: string): Promise<string> {
    const output = await runGit(['push', '--porcelain', 'origin', `${commit}:${this.#ref}`], {
      gitDir: this.#options.gitDir,
      timeoutMs: this.#options.networkTimeoutMs ?? 120_000,
    });
    const line = output.stdout.split('\n').find((text) => text.includes(this.#ref));
    if (output.code === 0 && line !== undefined && !line.startsWith('!')) return 'ok';
    if (line?.startsWith('!') === true && /\[rejected\]|fetch first|non-fast-forward/.test(line)) {
      return 'rejected';
    }
    // A host's rule refusing the ref says why in `remote:` lines: the operator needs them.
    const said = remoteMessage(output.stderr);
    return `cannot push ${this.#ref}: ${line?.split('\t').slice(2).join(' ').trim() || gitMessage(output)}${said === '' ? '' : ` (the remote said: ${said})`}`;
  }

  async #git(args: readonly string[], input?: string): Promise<string> {
    const output = await runGit(args, { gitDir: this.#options.gitDir, input });
    return check(output, `git ${args[0] ?? ''}`);
  }
}

function check(output: GitOutput, what: string): string {
  if (output.code !== 0) throw new Error(`${what}: ${gitMessage(output)}`);
  return output.stdout;
}

/** `message` without the clone's host path (it reaches events and the dashboard). */
function withoutGitDir(message: string, gitDir: string): string {
  return message.split(gitDir).join('<git directory>');
}
