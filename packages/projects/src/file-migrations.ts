import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  FILE_PROJECT_RECORD_VERSION,
  fileProjectPaths,
  localProjectNames,
  type FileProjectPaths,
} from './file-project-paths.js';
import { completeFileEventDefaults } from './migrations/event-defaults.js';
import { completeFileEvents } from './migrations/event-fields.js';
import {
  completeFileSessionSummaries,
  completeFileSummaryCommits,
} from './migrations/session-summaries.js';
import { emptyCounters, type ProjectRecord, type ProjectStatus } from './project.js';

/**
 * Run-once upgrades of what `baton run` keeps under `BATON_HOME`, in order; the ids applied are
 * kept in `<home>/migrations.json`. Readers assume the current shape: an old file is upgraded
 * here once, never interpreted on every read.
 */
interface FileMigration {
  /** Never renamed once released: it is what `migrations.json` remembers. */
  id: string;
  description: string;
  run(home: string): Promise<void>;
}

const FILE_MIGRATIONS: readonly FileMigration[] = [
  {
    id: '2026-12-03-local-project-record-v2',
    description:
      'project.json holds the ProjectRecord the workers use ({ v: 2, project }) instead of baton run’s own 17 fields',
    run: upgradeLocalRecords,
  },
  {
    id: '2026-12-04-local-project-record-defaults',
    description:
      'a version 2 project.json written before a field or counter existed gets what its absence meant (was: filled in on every read)',
    run: fillRecordDefaults,
  },
  {
    id: '2026-12-04-local-session-summary-fields',
    description:
      'sessions.jsonl summaries written before prompt caching get cache counts of 0, and those written before fallback models the model their session started on (was: defaults on every read)',
    run: completeFileSessionSummaries,
  },
  {
    id: '2026-12-04-local-event-fields',
    description:
      "events.jsonl turns, session starts, session results and check evidence written before a field existed get what its absence meant (turns their session's model, session starts a sandbox 'off': see migrations/event-fields.ts) (was: defaults on every read)",
    run: completeFileEvents,
  },
  {
    id: '2026-12-04-local-session-summary-commits',
    description:
      'sessions.jsonl summaries written before sessions listed their commits get an empty list (was: a default on every read)',
    run: completeFileSummaryCommits,
  },
  {
    id: '2026-12-04-local-event-defaults',
    description:
      'events.jsonl tool calls, memory changes, API retries, checkpoints, worker events, session starts without interrupted and applied edits without cleared_input_tokens get what the absence meant (see migrations/event-defaults.ts) (was: defaults on every read)',
    run: completeFileEventDefaults,
  },
];

/** Applies every migration `home` has not had yet; returns the ids it applied. */
export async function migrateFileProjects(home: string): Promise<string[]> {
  const file = path.join(home, 'migrations.json');
  const applied = await readApplied(file);
  const ran: string[] = [];
  for (const migration of FILE_MIGRATIONS) {
    if (applied.includes(migration.id)) continue;
    await migration.run(home);
    applied.push(migration.id);
    ran.push(migration.id);
    await mkdir(home, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ applied }, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }
  return ran;
}

async function readApplied(file: string): Promise<string[]> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { applied?: unknown };
    return Array.isArray(parsed.applied) ? parsed.applied.map(String) : [];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** What `baton run` wrote to project.json before version 2. */
interface LocalRecordV1 {
  id: string;
  goal: string;
  workspace: string;
  createdAt: string;
  sessions: number;
  running: boolean;
  lastOutcome?: string;
  totals?: {
    inputTokens: number;
    cacheReadInputTokens?: number;
    cacheCreationInputTokens?: number;
    outputTokens: number;
    costUsd: number;
  };
  repo?: string | null;
  base?: string | null;
  baseCommit?: string | null;
  branch?: string;
  lastCheckpoint?: string | null;
  skipHooks?: boolean;
  maxSessionsWithoutProgress?: number;
  sessionsWithoutProgress?: number;
  statusReason?: string | null;
}

/**
 * Calls `upgrade` with each project's parsed `project.json` and writes back the version 2 record
 * it returns (null: the file stays as it is). Unreadable files are left for the reader to report.
 */
async function upgradeRecordFiles(
  home: string,
  upgrade: (parsed: unknown, paths: FileProjectPaths) => Promise<ProjectRecord | null>,
): Promise<void> {
  for (const name of await localProjectNames(home)) {
    const paths = fileProjectPaths(home, name);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(paths.record, 'utf8'));
    } catch {
      continue; // Not a project directory (or an unreadable record, reported when it is opened).
    }
    const project = await upgrade(parsed, paths);
    if (project === null) continue;
    const temporary = `${paths.record}.${process.pid}.tmp`;
    const body = { v: FILE_PROJECT_RECORD_VERSION, project };
    await writeFile(temporary, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, paths.record);
  }
}

function upgradeLocalRecords(home: string): Promise<void> {
  return upgradeRecordFiles(home, async (parsed, paths) => {
    if (typeof parsed !== 'object' || parsed === null || 'v' in parsed) return null;
    return upgradeRecord(parsed as LocalRecordV1, await readChecklist(paths.memories));
  });
}

/** Passing and total features of the checklist in a local project's memory (0 of 0 without one). */
async function readChecklist(memories: string): Promise<{ passing: number; total: number }> {
  try {
    const features = JSON.parse(await readFile(path.join(memories, 'features.json'), 'utf8'));
    if (!Array.isArray(features)) return { passing: 0, total: 0 };
    const passing = features.filter(
      (feature: unknown) =>
        typeof feature === 'object' &&
        feature !== null &&
        (feature as { passes?: unknown }).passes === true,
    ).length;
    return { passing, total: features.length };
  } catch {
    return { passing: 0, total: 0 };
  }
}

/**
 * A version 1 record as the `ProjectRecord` both adapters keep. Version 1 had no status: it is
 * derived as `baton projects --local` did (running, every feature passing, the last outcome).
 */
function upgradeRecord(
  old: LocalRecordV1,
  features: { passing: number; total: number },
): ProjectRecord {
  const createdAt = Date.parse(old.createdAt) || Date.now();
  // v1 counted sessions when they started; a crashed one (`running`) never finished.
  const finished = old.running ? Math.max(0, old.sessions - 1) : old.sessions;
  const status: ProjectStatus = old.running
    ? 'running'
    : features.total > 0 && features.passing === features.total
      ? 'completed'
      : old.lastOutcome === 'failed'
        ? 'failed'
        : old.lastOutcome === 'cancelled'
          ? 'cancelled'
          : 'paused';
  return {
    id: old.id,
    goal: old.goal,
    workspace: old.workspace,
    adoptWorkspace: false,
    model: null,
    fallbackModel: null,
    budgets:
      old.maxSessionsWithoutProgress === undefined
        ? {}
        : { maxSessionsWithoutProgress: old.maxSessionsWithoutProgress },
    contextPreset: 'coding',
    context: {},
    sandbox: null,
    verification: null,
    sessionSandbox: null,
    createdAt,
    status,
    statusReason: status === 'paused' ? (old.statusReason ?? null) : null,
    statusAt: createdAt,
    counters: {
      ...emptyCounters(),
      sessions: finished,
      sessionsStarted: old.sessions,
      featuresPassing: features.passing,
      featuresTotal: features.total,
      inputTokens: old.totals?.inputTokens ?? 0,
      cacheReadInputTokens: old.totals?.cacheReadInputTokens ?? 0,
      cacheCreationInputTokens: old.totals?.cacheCreationInputTokens ?? 0,
      outputTokens: old.totals?.outputTokens ?? 0,
      costUsd: old.totals?.costUsd ?? 0,
      sessionsWithoutProgress: old.sessionsWithoutProgress ?? 0,
    },
    activeSession: old.running
      ? {
          sessionId: 'unknown',
          sessionNumber: old.sessions,
          jobId: `local-${old.sessions}`,
          workerId: 'local',
          startedAt: createdAt,
        }
      : null,
    lastError: null,
    repo: old.repo ?? null,
    base: old.base ?? null,
    baseCommit: old.baseCommit ?? null,
    branch: old.branch ?? `baton/${old.id}`,
    skipHooks: old.skipHooks === true,
    lastCheckpoint: old.lastCheckpoint ?? null,
  };
}

/**
 * What the absence of each field of a version 2 record meant when it was written before the field
 * existed: no verification settings, no adopted workspace, every later counter at zero.
 */
function fillRecordDefaults(home: string): Promise<void> {
  return upgradeRecordFiles(home, async (parsed) => {
    const record = parsed as { v?: unknown; project?: Partial<ProjectRecord> };
    if (record.v !== FILE_PROJECT_RECORD_VERSION || record.project === undefined) return null;
    const old = record.project;
    const project = {
      ...old,
      adoptWorkspace: old.adoptWorkspace ?? false,
      verification: old.verification ?? null,
      counters: { ...emptyCounters(), ...old.counters },
    } as ProjectRecord;
    return JSON.stringify(project) === JSON.stringify(old) ? null : project;
  });
}
