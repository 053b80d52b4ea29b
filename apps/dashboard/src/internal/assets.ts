/**
 * The web UI is plain ES modules and CSS in the package's `public/` folder: no bundler, no dev
 * server. Files are read once at start into a map keyed by URL path, so serving them can never
 * touch the filesystem with a user-supplied path.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DashboardError } from '../errors.js';

export interface Asset {
  body: Uint8Array;
  contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Files the server cannot work without; the build checks them too (scripts/check-assets.mjs). */
const REQUIRED_ASSETS = ['index.html', 'login.html', 'app.js', 'style.css'] as const;

/** `src/internal` and `dist/internal` are both two levels below the package root. */
export function defaultAssetsDirectory(): string {
  return fileURLToPath(new URL('../../public/', import.meta.url));
}

async function walk(directory: string, prefix: string, into: Map<string, Asset>): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      await walk(full, `${prefix}${entry.name}/`, into);
      continue;
    }
    const contentType = CONTENT_TYPES[path.extname(entry.name)];
    if (!entry.isFile() || contentType === undefined) continue;
    into.set(`${prefix}${entry.name}`, { body: await readFile(full), contentType });
  }
}

/** Loads every servable file below `directory`; throws `missing_assets` naming what is absent. */
export async function loadAssets(directory: string): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  try {
    await walk(directory, '', assets);
  } catch (error) {
    throw new DashboardError(
      'missing_assets',
      `dashboard assets folder ${directory} is not readable`,
      {
        cause: error,
      },
    );
  }
  const missing = REQUIRED_ASSETS.filter((name) => !assets.has(name));
  if (missing.length > 0) {
    throw new DashboardError(
      'missing_assets',
      `dashboard assets missing from ${directory}: ${missing.join(', ')}`,
    );
  }
  return assets;
}
