import { MAX_REDACTED_TEXT_BYTES, isMemoryToolError, parseMemoryPath } from '@baton/core';
import { z } from 'zod';
import { hasSecretFileName, textHoldsSecret } from './secret-files.js';

/**
 * The shape of a memory snapshot in git (docs/workspaces.md, "Memory snapshots"): a commit on
 * `refs/baton/memory/<project-id>` whose tree holds `manifest.json` and the project's memory
 * files under `memories/`. Its parent is the previous snapshot. The ref is not a branch, so it
 * never shows among the branches a user merges.
 */

/** The version of the snapshot layout; a reader refuses a snapshot of another. */
export const MEMORY_SNAPSHOT_FORMAT = 1;

/** The file of a snapshot's tree that describes it. */
export const MEMORY_SNAPSHOT_MANIFEST = 'manifest.json';

/** The folder of a snapshot's tree that holds the memory files (their store paths below it). */
export const MEMORY_SNAPSHOT_FILES = 'memories';

/** The most files one snapshot holds or one restore accepts. */
export const MAX_SNAPSHOT_FILES = 1_000;

/** The most bytes of memory (sum of file sizes) one snapshot holds or one restore accepts. */
export const MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

/** The ref a project's memory snapshots live on. */
export function memorySnapshotRef(projectId: string): string {
  return `refs/baton/memory/${projectId}`;
}

/** One memory file: its store path (`notes/a.md`, no `/memories` prefix) and its text. */
export interface MemoryFile {
  path: string;
  content: string;
}

/** Why a memory file was left out of a snapshot. Never its content. */
export type WithheldReason = 'secret_file_name' | 'secret_content' | 'invalid_path' | 'too_large';

/** A memory file left out of a snapshot. */
export interface WithheldMemoryFile {
  path: string;
  reason: WithheldReason;
}

const withheldSchema = z.object({
  path: z.string().max(1_024),
  reason: z.enum(['secret_file_name', 'secret_content', 'invalid_path', 'too_large']),
});

/** `manifest.json` of a snapshot. */
export const memorySnapshotManifestSchema = z.object({
  format: z.literal(MEMORY_SNAPSHOT_FORMAT),
  projectId: z.string().min(1).max(200),
  goal: z.string().max(1_000_000),
  sessionNumber: z.number().int().nonnegative(),
  /** The lease's fencing token of the session that wrote it (`null`: `baton run`, no lease). */
  fenceToken: z.number().int().nonnegative().nullable(),
  /** ISO time the snapshot was made. */
  createdAt: z.string().max(64),
  /** The store paths of the files the snapshot holds. */
  files: z.array(z.string().max(1_024)).max(MAX_SNAPSHOT_FILES),
  /** Files the secret scan or the path rules kept out: paths and reasons, never contents. */
  withheld: z.array(withheldSchema).max(MAX_SNAPSHOT_FILES),
});

export type MemorySnapshotManifest = z.infer<typeof memorySnapshotManifestSchema>;

/**
 * The store path `path` as the memory store itself would accept it, or `null`: the model wrote
 * it, so it is checked as hostile (`..`, absolute, backslashes, control characters, encodings,
 * a name git refuses such as `.git`). Only a path already in canonical form passes.
 */
export function safeMemoryPath(path: string): string | null {
  if (path === '' || path.startsWith('/')) return null;
  let canonical: string;
  try {
    canonical = parseMemoryPath(`/memories/${path}`);
  } catch (error) {
    if (isMemoryToolError(error)) return null;
    throw error;
  }
  if (canonical !== path) return null;
  // git refuses a tree entry named .git in any letter case (and hosts check for it on push).
  if (path.split('/').some((name) => name.toLowerCase() === '.git')) return null;
  return path;
}

/**
 * Splits memory files into the ones a snapshot may hold and the ones withheld: a path the memory
 * store would refuse, a secret file name (`.env`, `*.pem`, ...) or content holding a vendor key
 * (the checkpoint's own rules, `secret-files.ts`), or past the snapshot's size limits.
 */
export function screenMemoryFiles(files: readonly MemoryFile[]): {
  kept: MemoryFile[];
  withheld: WithheldMemoryFile[];
} {
  const kept: MemoryFile[] = [];
  const withheld: WithheldMemoryFile[] = [];
  let bytes = 0;
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const path = safeMemoryPath(file.path);
    if (path === null) {
      // The name itself is the model's text: keep it printable and short in the manifest.
      withheld.push({ path: printablePath(file.path), reason: 'invalid_path' });
      continue;
    }
    if (hasSecretFileName(path)) {
      withheld.push({ path, reason: 'secret_file_name' });
      continue;
    }
    if (holdsSecretAnywhere(file.content)) {
      withheld.push({ path, reason: 'secret_content' });
      continue;
    }
    const size = Buffer.byteLength(file.content, 'utf8');
    if (kept.length >= MAX_SNAPSHOT_FILES || bytes + size > MAX_SNAPSHOT_BYTES) {
      withheld.push({ path, reason: 'too_large' });
      continue;
    }
    bytes += size;
    kept.push({ path, content: file.content });
  }
  return { kept, withheld };
}

/** A hostile path as a manifest may name it: control characters escaped, at most 200 characters. */
function printablePath(path: string): string {
  // eslint-disable-next-line no-control-regex -- escaping them is the point
  const escaped = path.replace(/[\u0000-\u001f\u007f-\u009f]/g, (character) => {
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return escaped.length > 200 ? `${escaped.slice(0, 200)}...` : escaped;
}

/** The content rules over the whole text, in overlapping windows of the size they are bounded on. */
function holdsSecretAnywhere(content: string): boolean {
  const window = MAX_REDACTED_TEXT_BYTES / 4;
  const overlap = 4_096;
  for (let start = 0; start < content.length; start += window - overlap) {
    if (textHoldsSecret(content.slice(start, start + window))) return true;
    if (start + window >= content.length) break;
  }
  return false;
}
