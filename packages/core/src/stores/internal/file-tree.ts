import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreUsage } from '../../store.js';
import { FILE_SYSTEM_STORE_RESERVED_NAME } from '../file-system-store-options.js';
import { snapshotEntry, type SnapshotEntry } from './directory-snapshots.js';
import { compareCodeUnits } from './store-paths.js';

/**
 * Bytes and files below a host directory (symlinks and the reserved directory excluded). O(files),
 * synchronous like `readDirectoryEntries`.
 */
export function measureTree(root: string, directory: string = root): StoreUsage {
  const totals = { bytes: 0, files: 0 };
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (directory === root && entry.name === FILE_SYSTEM_STORE_RESERVED_NAME) continue;
    const host = join(directory, entry.name);
    if (entry.isDirectory()) {
      const below = measureTree(root, host);
      totals.bytes += below.bytes;
      totals.files += below.files;
    } else if (entry.isFile()) {
      const stats = lstatSync(host, { throwIfNoEntry: false });
      if (stats?.isFile() === true) {
        totals.bytes += stats.size;
        totals.files += 1;
      }
    }
  }
  return totals;
}

/**
 * A directory's entries sorted by name, with the stats of its files (`isRoot`: the store's root,
 * whose reserved directory is left out). Synchronous on purpose: for thousands of entries
 * lstatSync is several times faster than thousands of thread-pool round trips, and a 2,000-entry
 * read blocks the loop for a few ms.
 */
export function readDirectoryEntries(hostDirectory: string, isRoot: boolean): SnapshotEntry[] {
  const entries: SnapshotEntry[] = [];
  for (const dirent of readdirSync(hostDirectory, { withFileTypes: true })) {
    if (isRoot && dirent.name === FILE_SYSTEM_STORE_RESERVED_NAME) continue;
    // Symbolic links and special files are not part of the store.
    if (dirent.isDirectory()) {
      entries.push({ name: dirent.name, kind: 'directory' });
    } else if (dirent.isFile()) {
      const stats = lstatSync(join(hostDirectory, dirent.name), { throwIfNoEntry: false });
      const entry = stats === undefined ? undefined : snapshotEntry(dirent.name, stats);
      if (entry !== undefined) entries.push(entry);
    }
  }
  return entries.sort((left, right) => compareCodeUnits(left.name, right.name));
}
