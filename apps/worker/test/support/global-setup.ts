import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** Packages the worker process loads from dist, in dependency order. */
const PACKAGES = [
  'packages/core',
  'packages/context-config',
  'packages/storage-redis',
  'packages/model-sim',
  'packages/workspace',
  'packages/session',
  'packages/projects',
  'apps/worker',
];

function newest(directory: string): number {
  let latest = 0;
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = path.join(directory, entry);
    const stat = statSync(full);
    latest = Math.max(latest, stat.isDirectory() ? newest(full) : stat.mtimeMs);
  }
  return latest;
}

/**
 * Builds each package whose sources are newer than its dist (plain `node` cannot run
 * TypeScript). A package's emitted JavaScript depends only on its own sources, so an unchanged
 * package is not rebuilt when an upstream one is.
 */
export default function setup(): void {
  for (const relative of PACKAGES) {
    const directory = path.join(root, relative);
    const built = newest(path.join(directory, 'dist'));
    const stale = built === 0 || newest(path.join(directory, 'src')) > built;
    if (!stale) continue;
    execFileSync('pnpm', ['run', '-s', 'build'], { cwd: directory, stdio: 'inherit' });
  }
}
