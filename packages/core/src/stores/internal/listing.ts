import { lstatSync, type Stats } from 'node:fs';
import type { ListOptions, ListedEntry } from '../../store.js';
import { snapshotEntry, type DirectorySnapshots } from './directory-snapshots.js';
import { readDirectoryEntries } from './file-tree.js';
import { DIRECTORY_SIZE, isHiddenName, parentOf } from './store-paths.js';

/** What the listing needs of a file-system store: its listing cache and where a path lives. */
export interface ListingTree {
  snapshots: DirectorySnapshots;
  /** The host path of a store path (`''` is the root). */
  host(path: string): string;
}

/** One directory to list: its `lstat`, the depth of its entries, and where they go. */
export interface ListingStep {
  directory: string;
  stats: Stats;
  depth: number;
  options: ListOptions;
  into: ListedEntry[];
  generation: () => string;
}

/**
 * Appends the entries below `step.directory` to `step.into`, from the listing cache when the
 * directory is unchanged. Subdirectories are always `lstat`ed live: their own times change
 * without their parent changing.
 */
export function collectListing(tree: ListingTree, step: ListingStep): void {
  const { directory, stats, depth, options, into, generation } = step;
  let entries = tree.snapshots.get(directory, stats, generation);
  if (entries === undefined) {
    const takenAt = Date.now();
    entries = readDirectoryEntries(tree.host(directory), directory === '');
    tree.snapshots.set(directory, stats, entries, takenAt, generation());
  }
  for (const entry of entries) {
    if (options.skipHidden === true && isHiddenName(entry.name)) continue;
    const path = directory === '' ? entry.name : `${directory}/${entry.name}`;
    if (entry.kind === 'file') {
      into.push({ path, depth, kind: 'file', size: entry.size, modifiedAt: entry.modifiedAt });
      continue;
    }
    const below = lstatSync(tree.host(path), { throwIfNoEntry: false });
    // Gone or replaced since the directory was read: its parent changed, the next list sees it.
    if (below?.isDirectory() !== true) continue;
    into.push({
      path,
      depth,
      kind: 'directory',
      size: DIRECTORY_SIZE,
      modifiedAt: below.mtimeMs,
    });
    if (depth < options.depth) {
      collectListing(tree, { ...step, directory: path, stats: below, depth: depth + 1 });
    }
  }
}

/**
 * Before a mutation changes the entry at `path` (store lock held, `lockedGeneration` the
 * generation it found): keeps the cached listing of its directory only if it is current, and
 * returns the function that, after the change, patches the entry's new state into it (one
 * `lstat` of the directory and one of the entry).
 */
export function prepareListingChange(
  tree: ListingTree,
  path: string,
  lockedGeneration: string,
): () => void {
  const directory = parentOf(path);
  if (!tree.snapshots.has(directory)) return () => undefined;
  const hostDirectory = tree.host(directory);
  const before = lstatSync(hostDirectory, { throwIfNoEntry: false });
  if (!tree.snapshots.prepareChange(directory, before, lockedGeneration)) {
    return () => undefined;
  }
  const name = path.slice(directory === '' ? 0 : directory.length + 1);
  return () => {
    const after = lstatSync(hostDirectory, { throwIfNoEntry: false });
    const stats = lstatSync(tree.host(path), { throwIfNoEntry: false });
    tree.snapshots.patch(
      directory,
      after,
      name,
      stats === undefined ? undefined : snapshotEntry(name, stats),
    );
  };
}
