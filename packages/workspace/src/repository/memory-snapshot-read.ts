import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MemoryStore } from '@baton/core';
import { gitMessage, redactUrlCredentials, runGit } from './git.js';
import {
  MAX_SNAPSHOT_BYTES,
  MAX_SNAPSHOT_FILES,
  MEMORY_SNAPSHOT_FILES,
  MEMORY_SNAPSHOT_MANIFEST,
  type MemoryFile,
  type MemorySnapshotManifest,
  memorySnapshotManifestSchema,
  memorySnapshotRef,
  safeMemoryPath,
} from './memory-snapshot-format.js';
import { normalizeRepo } from './source.js';

/** A project's latest memory snapshot as read from its repository. */
export interface MemorySnapshot {
  /** The snapshot commit. */
  commit: string;
  manifest: MemorySnapshotManifest;
  /** The memory files, each path checked as the memory store requires. */
  files: MemoryFile[];
}

/** What `readMemorySnapshot` found. */
export type MemorySnapshotRead =
  | { found: true; snapshot: MemorySnapshot }
  /** No snapshot ref for the project (`reason` says so), or one that cannot be used (and why). */
  | { found: false; missing: boolean; reason: string };

/**
 * Reads `refs/baton/memory/<project-id>` of `repo` (path or URL) into a scratch bare repository
 * and returns its manifest and files. A snapshot of another format or project, with a path the
 * memory store would refuse, anything but plain files, or over the size limits is refused whole
 * (`found: false` with the reason): restoring half a memory would mislead the next session.
 */
export async function readMemorySnapshot(options: {
  repo: string;
  projectId: string;
  cwd?: string | undefined;
  timeoutMs?: number | undefined;
}): Promise<MemorySnapshotRead> {
  const repo = normalizeRepo(options.repo, options.cwd);
  const ref = memorySnapshotRef(options.projectId);
  const scratch = await mkdtemp(path.join(tmpdir(), 'baton-memory-snapshot-'));
  const git = (args: readonly string[], input?: string) =>
    runGit(args, { gitDir: scratch, timeoutMs: options.timeoutMs ?? 60_000, input });
  try {
    const init = await runGit(['init', '-q', '--bare', scratch]);
    if (init.code !== 0) return unusable(`cannot create a scratch repository: ${gitMessage(init)}`);
    const fetched = await git(['fetch', '-q', '--no-tags', '--', repo, `+${ref}:${ref}`]);
    if (fetched.code !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) {
        return { found: false, missing: true, reason: `no memory snapshot (${ref})` };
      }
      return unusable(
        `cannot fetch ${ref} from ${redactUrlCredentials(repo)}: ${gitMessage(fetched)}`,
      );
    }
    const commit = (await git(['rev-parse', '-q', '--verify', `${ref}^{commit}`])).stdout.trim();
    const listed = await git(['ls-tree', '-r', '-z', '--full-tree', '-l', commit]);
    if (listed.code !== 0) return unusable(`cannot list the snapshot: ${gitMessage(listed)}`);
    let manifestBlob: string | null = null;
    const blobs: Array<{ path: string; blob: string }> = [];
    let bytes = 0;
    for (const record of listed.stdout.split('\0')) {
      if (record === '') continue;
      const match = /^(\d{6}) (\w+) ([0-9a-f]{40,64}) +(\S+)\t(.*)$/su.exec(record);
      if (match === null) return unusable('the snapshot tree is malformed');
      const [, mode, type, blob = '', size = '0', name = ''] = match;
      if (name === MEMORY_SNAPSHOT_MANIFEST && mode === '100644' && type === 'blob') {
        manifestBlob = blob;
        continue;
      }
      const prefix = `${MEMORY_SNAPSHOT_FILES}/`;
      if (!name.startsWith(prefix)) return unusable(`the snapshot holds an unexpected entry`);
      const storePath = name.slice(prefix.length);
      if (safeMemoryPath(storePath) === null) {
        return unusable(`the snapshot holds a path the memory store refuses`);
      }
      if (mode !== '100644' || type !== 'blob') {
        return unusable(`the snapshot holds ${storePath}, which is not a plain file`);
      }
      bytes += Number(size);
      if (blobs.length >= MAX_SNAPSHOT_FILES || bytes > MAX_SNAPSHOT_BYTES) {
        return unusable('the snapshot is larger than a memory snapshot may be');
      }
      blobs.push({ path: storePath, blob });
    }
    if (manifestBlob === null) return unusable(`the snapshot has no ${MEMORY_SNAPSHOT_MANIFEST}`);
    const manifestText = await git(['cat-file', 'blob', manifestBlob]);
    let manifest: MemorySnapshotManifest;
    try {
      manifest = memorySnapshotManifestSchema.parse(JSON.parse(manifestText.stdout));
    } catch {
      return unusable(
        `its ${MEMORY_SNAPSHOT_MANIFEST} is not a memory snapshot manifest Baton reads`,
      );
    }
    if (manifest.projectId !== options.projectId) {
      return unusable(`it belongs to project ${manifest.projectId}`);
    }
    const files: MemoryFile[] = [];
    for (const { path: storePath, blob } of blobs) {
      const content = await git(['cat-file', 'blob', blob]);
      if (content.code !== 0) return unusable(`cannot read ${storePath}: ${gitMessage(content)}`);
      files.push({ path: storePath, content: content.stdout });
    }
    return { found: true, snapshot: { commit, manifest, files } };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function unusable(reason: string): MemorySnapshotRead {
  return { found: false, missing: false, reason: `memory snapshot unreadable: ${reason}` };
}

/**
 * Writes a snapshot's files into `store` through the `MemoryStore` interface (Redis or files),
 * replacing what is at their paths. Returns how many were written.
 */
export async function restoreMemoryFiles(
  store: MemoryStore,
  files: readonly MemoryFile[],
): Promise<number> {
  for (const file of files) {
    await store.write(file.path, file.content, { mode: 'overwrite', command: 'restore' });
  }
  return files.length;
}
