import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CLI_ENV_VARIABLES } from './environment.js';

// A `baton run` project's files (`project.json`, `memories/`, `events.jsonl`, ...) are laid out by
// `fileProjectPaths` of `@baton/projects`, the `FileProjectLog` that keeps them.

/** `BATON_HOME` (default `.baton` in the current directory), absolute. */
export function batonHome(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const home = env[CLI_ENV_VARIABLES.home]?.trim();
  return path.resolve(cwd, home === undefined || home === '' ? '.baton' : home);
}

/** A readable, unique project id from a goal's first line or a file name: `todo-app-3fa2`. */
export function deriveProjectId(source: string): string {
  const slug = source
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/g, '');
  return `${slug === '' ? 'project' : slug}-${randomBytes(2).toString('hex')}`;
}
