import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ProjectSandbox } from '@baton/workspace';
import { CLI_ENV_VARIABLES } from './environment.js';

/** What `baton run` keeps about a project in `<BATON_HOME>/projects/<id>/project.json`. */
export interface ProjectRecord {
  id: string;
  goal: string;
  /** Absolute workspace directory. */
  workspace: string;
  createdAt: string;
  /** Sessions started so far (the next session's number is this plus one). */
  sessions: number;
  /** True while a session runs: still true at the next start means the last one crashed. */
  running: boolean;
  /** Outcome of the last finished session. */
  lastOutcome?: string;
  /** Sums over every finished session (absent in records written before totals were kept). */
  totals?: ProjectTotals;
  /** The repository (`--repo`, absolute path or URL); `null`: a bare repository Baton owns. Absent in older records. */
  repo?: string | null;
  /** The base branch (`--base`, resolved); `null` when the project started from nothing. */
  base?: string | null;
  /** The commit the branch started from. */
  baseCommit?: string | null;
  /** `baton/<id>`. */
  branch?: string;
  /** The last pushed checkpoint commit. */
  lastCheckpoint?: string | null;
  /** Commit checkpoints without running the repository's hooks. */
  skipHooks?: boolean;
  /** `--allow-host`: the project's sandbox settings (`projectSandboxSchema`), added to BATON_SANDBOX's. */
  sandbox?: ProjectSandbox | null;
  /** `--stall-after`: resume sessions in a row without a newly passing feature before the run pauses (default 3). */
  maxSessionsWithoutProgress?: number;
  /** The current streak of resume sessions without a newly passing feature. */
  sessionsWithoutProgress?: number;
  /** Why the last run stopped when the project did not finish (e.g. `no_progress: ...`); `null` once it runs again. */
  statusReason?: string | null;
}

/**
 * Token and cost sums of a local project's finished sessions. `inputTokens` is the uncached
 * input (the API's `input_tokens`); the cache fields are absent in records written before Baton
 * cached prompts.
 */
export interface ProjectTotals {
  inputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  outputTokens: number;
  costUsd: number;
}

/** `totals` plus one session's usage. */
export function addSessionUsage(
  totals: ProjectTotals | undefined,
  usage: Required<ProjectTotals>,
): Required<ProjectTotals> {
  return {
    inputTokens: (totals?.inputTokens ?? 0) + usage.inputTokens,
    cacheReadInputTokens: (totals?.cacheReadInputTokens ?? 0) + usage.cacheReadInputTokens,
    cacheCreationInputTokens:
      (totals?.cacheCreationInputTokens ?? 0) + usage.cacheCreationInputTokens,
    outputTokens: (totals?.outputTokens ?? 0) + usage.outputTokens,
    costUsd: Number(((totals?.costUsd ?? 0) + usage.costUsd).toFixed(6)),
  };
}

/** Paths of one project under BATON_HOME. */
export interface ProjectPaths {
  dir: string;
  record: string;
  memories: string;
  workspace: string;
  /** Every session event of the project as JSON lines, read by `baton logs --local`. */
  events: string;
  /** One JSON-lines transcript per session, read by `baton transcript --local` and `baton search --local`. */
  transcripts: string;
}

/** `BATON_HOME` (default `.baton` in the current directory), absolute. */
export function batonHome(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const home = env[CLI_ENV_VARIABLES.home]?.trim();
  return path.resolve(cwd, home === undefined || home === '' ? '.baton' : home);
}

export function projectPaths(home: string, id: string): ProjectPaths {
  const dir = path.join(home, 'projects', id);
  return {
    dir,
    record: path.join(dir, 'project.json'),
    memories: path.join(dir, 'memories'),
    workspace: path.join(dir, 'workspace'),
    events: path.join(dir, 'events.jsonl'),
    transcripts: path.join(dir, 'transcripts'),
  };
}

export async function readProject(paths: ProjectPaths): Promise<ProjectRecord | null> {
  try {
    return JSON.parse(await readFile(paths.record, 'utf8')) as ProjectRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Write project.json atomically (temp file + rename) so a crash never leaves half a record. */
export async function writeProject(paths: ProjectPaths, record: ProjectRecord): Promise<void> {
  await mkdir(paths.dir, { recursive: true });
  const temporary = `${paths.record}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, paths.record);
}

/** `writeProject` for event handlers that must not interleave with the next event. */
export function writeProjectSync(paths: ProjectPaths, record: ProjectRecord): void {
  mkdirSync(paths.dir, { recursive: true });
  const temporary = `${paths.record}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, paths.record);
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
