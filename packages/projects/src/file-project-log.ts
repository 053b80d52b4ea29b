import { appendFile, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ContextConfigInput } from '@baton/context-config';
import type { FeatureChecks } from '@baton/session';
import type { SandboxDescription } from '@baton/workspace';
import { ProjectError } from './errors.js';
import { decodeProjectEventJson } from './event-decoder.js';
import { migrateFileProjects } from './file-migrations.js';
import { withFileLock } from './file-record-lock.js';
import {
  FILE_PROJECT_RECORD_VERSION,
  fileProjectPaths,
  type FileProjectPaths,
} from './file-project-paths.js';
import type { EventEntry, WorkerEvent } from './events.js';
import {
  emptyCounters,
  type ActiveSessionInfo,
  type ProjectBudgets,
  type ProjectRecord,
  type ProjectStatus,
  type StatusTransition,
} from './project.js';
import type {
  LoggedEvent,
  NewProjectRecord,
  ProjectLog,
  SessionEndOptions,
  SessionSummary,
  TransitionOptions,
  TransitionResult,
} from './project-log.js';
import { decodeSessionSummaryJson } from './session-summary-decoder.js';

/** The stored settings `setSettings` replaces; each one absent stays as it is. */
export interface ProjectSettings {
  budgets?: ProjectBudgets | undefined;
  /** The model every session of the project uses. */
  model?: string | undefined;
  /** The context config every session resolves; its preset becomes `contextPreset`. */
  context?: ContextConfigInput | undefined;
}

export interface FileProjectLogOptions {
  /** `BATON_HOME`, absolute: projects live in `<home>/projects/<id>/`. */
  home: string;
  /** Sees every event once it is appended (`baton run --json` prints them). Default: none. */
  onAppend?: ((event: WorkerEvent | LoggedEvent) => void) | undefined;
}

/**
 * `ProjectLog` on plain files under `BATON_HOME`, for `baton run` and the CLI's `--local` verbs:
 * one process runs a project's sessions (`baton run`), others may change its record meanwhile
 * (`baton pause --local`), so each change of a record is serialized in this process, holds the
 * record's lock against other processes (`withFileLock`), and is written atomically (temporary
 * file, then rename).
 */
export class FileProjectLog implements ProjectLog {
  readonly home: string;
  readonly #onAppend: FileProjectLogOptions['onAppend'];
  /** Lines of each project's events file this log has seen, so an append need not count them. */
  readonly #eventLines = new Map<string, number>();
  /** Every write of this log runs after the previous one, so read-modify-write cannot interleave. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: FileProjectLogOptions) {
    this.home = options.home;
    this.#onAppend = options.onAppend;
  }

  paths(projectId: string): FileProjectPaths {
    return fileProjectPaths(this.home, projectId);
  }

  async create(record: NewProjectRecord): Promise<ProjectRecord> {
    return this.#serialized(async () => {
      if ((await this.#read(record.id)) !== null) {
        throw new ProjectError('conflict', `project ${record.id} already exists`);
      }
      const now = record.createdAt;
      const stored: ProjectRecord = {
        ...record,
        status: 'queued',
        statusReason: 'created',
        statusAt: now,
        counters: emptyCounters(),
        activeSession: null,
        lastError: null,
        sessionSandbox: null,
        lastCheckpoint: record.lastCheckpoint ?? null,
      };
      await mkdir(this.paths(record.id).dir, { recursive: true, mode: 0o700 });
      await this.#write(stored);
      await this.#appendLine(this.paths(record.id).transitions, {
        at: now,
        from: null,
        to: 'queued',
        reason: 'created',
      } satisfies StatusTransition);
      return stored;
    });
  }

  async get(projectId: string): Promise<ProjectRecord | null> {
    return this.#read(projectId);
  }

  async require(projectId: string): Promise<ProjectRecord> {
    const project = await this.get(projectId);
    if (!project) throw new ProjectError('not_found', `no project with id ${projectId}`);
    return project;
  }

  /** Every project under `home`, oldest first. */
  async list(): Promise<ProjectRecord[]> {
    let names: string[];
    try {
      names = await readdir(path.join(this.home, 'projects'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const projects: ProjectRecord[] = [];
    for (const name of names.sort()) {
      const record = await this.#read(name).catch(() => null);
      if (record !== null) projects.push(record);
    }
    return projects.sort((a, b) => a.createdAt - b.createdAt);
  }

  async transition(
    projectId: string,
    to: ProjectStatus,
    options: TransitionOptions = {},
  ): Promise<TransitionResult> {
    const now = Date.now();
    const reason = options.reason === undefined || options.reason === '' ? null : options.reason;
    const moved = await this.#update(projectId, (project) => {
      if (options.from !== undefined && !options.from.includes(project.status)) return null;
      const from = project.status;
      project.status = to;
      project.statusReason = reason;
      project.statusAt = now;
      return from;
    });
    if (moved === undefined) return { ok: false, current: null };
    if (moved.result === null) return { ok: false, current: moved.project.status };
    const from = moved.result;
    await this.#appendLine(this.paths(projectId).transitions, {
      at: now,
      from,
      to,
      reason,
    } satisfies StatusTransition);
    await this.appendEvent(projectId, {
      v: 1,
      type: 'project-status',
      at: now,
      projectId,
      from,
      to,
      reason,
      ...(options.budgetReached === true ? { budgetReached: true } : {}),
    });
    return { ok: true, from };
  }

  async transitions(projectId: string): Promise<StatusTransition[]> {
    return this.#readLines<StatusTransition>(this.paths(projectId).transitions);
  }

  async markSessionStart(
    projectId: string,
    active: ActiveSessionInfo,
    interrupted: boolean,
    sandbox?: SandboxDescription,
  ): Promise<void> {
    await this.#require(
      await this.#update(projectId, (project) => {
        project.activeSession = active;
        if (sandbox !== undefined) project.sessionSandbox = sandbox;
        if (interrupted) project.counters.interruptions += 1;
        project.counters.sessionsStarted = Math.max(
          project.counters.sessionsStarted,
          active.sessionNumber,
        );
      }),
      projectId,
    );
  }

  async recordSessionEnd(
    projectId: string,
    summary: SessionSummary,
    options: SessionEndOptions,
  ): Promise<void> {
    // The evidence first: a crash before the record leaves true evidence and an unrecorded
    // session (run again), never a recorded session whose checks are lost.
    const checks = options.checks ?? {};
    if (Object.keys(checks).length > 0) {
      await this.#serialized(async () => {
        if ((await this.#read(projectId)) === null) return;
        const stored = await this.#readChecks(projectId);
        await this.#writeAtomically(this.paths(projectId).checks, { ...stored, ...checks });
      });
    }
    await this.#require(
      await this.#update(projectId, (project) => {
        const counters = project.counters;
        counters.sessions += 1;
        counters.inputTokens += summary.inputTokens;
        counters.cacheReadInputTokens += summary.cacheReadInputTokens;
        counters.cacheCreationInputTokens += summary.cacheCreationInputTokens;
        counters.outputTokens += summary.outputTokens;
        counters.clearedInputTokens += summary.clearedInputTokens;
        counters.costUsd = Number((counters.costUsd + summary.costUsd).toFixed(6));
        counters.featuresPassing = summary.featuresAfter.passing;
        counters.featuresTotal = summary.featuresAfter.total;
        if (options.failed) {
          counters.consecutiveFailures += 1;
          project.lastError = summary.error ?? summary.reason;
        } else {
          counters.consecutiveFailures = 0;
        }
        if (options.progress === 'progressed') counters.sessionsWithoutProgress = 0;
        if (options.progress === 'none') counters.sessionsWithoutProgress += 1;
        if (options.uselessContextFill === true) counters.uselessContextFills += 1;
        if (options.uselessContextFill === false) counters.uselessContextFills = 0;
        if (summary.verification !== undefined) {
          counters.featuresVerified = summary.verification.verified;
          counters.featuresClaimed = summary.verification.claimed;
          counters.featuresRegressed = summary.verification.regressed;
        }
        project.activeSession = null;
      }),
      projectId,
    );
    await this.#appendLine(this.paths(projectId).sessions, summary);
  }

  async readChecks(projectId: string): Promise<FeatureChecks> {
    return this.#readChecks(projectId);
  }

  async listSessions(projectId: string): Promise<SessionSummary[]> {
    return (await this.#readTextLines(this.paths(projectId).sessions)).map(
      decodeSessionSummaryJson,
    );
  }

  async setLastCheckpoint(projectId: string, commit: string): Promise<void> {
    await this.#require(
      await this.#update(projectId, (project) => {
        project.lastCheckpoint = commit;
      }),
      projectId,
    );
  }

  async resetFailures(projectId: string): Promise<void> {
    await this.#require(
      await this.#update(projectId, (project) => {
        project.counters.consecutiveFailures = 0;
        project.counters.sessionsWithoutProgress = 0;
        project.counters.uselessContextFills = 0;
      }),
      projectId,
    );
  }

  /**
   * Replaces the stored settings given (`baton run --project ID` with project options: each flag
   * its own setting), leaving the others as they are.
   */
  async setSettings(projectId: string, settings: ProjectSettings): Promise<void> {
    await this.#require(
      await this.#update(projectId, (project) => {
        if (settings.budgets !== undefined) project.budgets = settings.budgets;
        if (settings.model !== undefined) project.model = settings.model;
        if (settings.context !== undefined) {
          project.context = settings.context;
          project.contextPreset = settings.context.preset ?? project.contextPreset;
        }
      }),
      projectId,
    );
  }

  async appendEvent(projectId: string, event: WorkerEvent | LoggedEvent): Promise<string> {
    // Appends are serialized with the record writes, so events keep the order they were made in.
    return this.#serialized(async () => {
      const file = this.paths(projectId).events;
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      // An entry's id is its line number (what `readEvents` pages by).
      const lines = this.#eventLines.get(projectId) ?? (await countLines(file));
      await appendFile(file, `${JSON.stringify(event)}\n`, { mode: 0o600 });
      this.#eventLines.set(projectId, lines + 1);
      this.#onAppend?.(event);
      return String(lines + 1);
    });
  }

  async readEvents(
    projectId: string,
    options: { fromId?: string | undefined; count?: number | undefined } = {},
  ): Promise<EventEntry[]> {
    let text: string;
    try {
      text = await readFile(this.paths(projectId).events, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    // An entry's id is its line number: the file only grows, so a cursor holds.
    const start = options.fromId === undefined ? 0 : Number(options.fromId);
    const lines = text.split('\n').slice(0, -1);
    return lines.slice(start, start + (options.count ?? 100)).map((line, index) => ({
      id: String(start + index + 1),
      event: decodeProjectEventJson(line),
    }));
  }

  async delete(projectId: string): Promise<void> {
    await this.#serialized(async () => {
      this.#eventLines.delete(projectId);
      await rm(this.paths(projectId).dir, { recursive: true, force: true });
    });
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #require<T>(value: T | undefined, projectId: string): Promise<T> {
    if (value === undefined) throw new ProjectError('not_found', `no project with id ${projectId}`);
    return value;
  }

  /**
   * Reads, changes and writes the record as one step of the queue; `undefined` when there is no
   * such project. `change` returns what the caller needs back.
   */
  async #update<T>(
    projectId: string,
    change: (project: ProjectRecord) => T,
  ): Promise<{ project: ProjectRecord; result: T } | undefined> {
    // Serialized in this process, and locked against the others writing the same project.
    return this.#serialized(() =>
      withFileLock(this.paths(projectId).record, async () => {
        const project = await this.#read(projectId);
        if (project === null) return undefined;
        const result = change(project);
        if (result !== null) await this.#write(project);
        return { project, result };
      }),
    );
  }

  async #read(projectId: string): Promise<ProjectRecord | null> {
    let text: string;
    try {
      text = await readFile(this.paths(projectId).record, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw error;
    }
    const parsed = JSON.parse(text) as { v?: unknown; project?: ProjectRecord };
    if (parsed.v !== FILE_PROJECT_RECORD_VERSION || parsed.project === undefined) {
      throw new ProjectError(
        'invalid_input',
        `${this.paths(projectId).record} is not a version ${FILE_PROJECT_RECORD_VERSION} project record; it was written by another version of baton`,
      );
    }
    // Fields added since a record was written are filled in once by `migrateFileProjects`.
    return parsed.project;
  }

  async #write(project: ProjectRecord): Promise<void> {
    await this.#writeAtomically(this.paths(project.id).record, {
      v: FILE_PROJECT_RECORD_VERSION,
      project,
    });
  }

  /** Writes `value` as JSON through a temporary file and a rename: never seen half written. */
  async #writeAtomically(file: string, value: unknown): Promise<void> {
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }

  async #readChecks(projectId: string): Promise<FeatureChecks> {
    try {
      return JSON.parse(await readFile(this.paths(projectId).checks, 'utf8')) as FeatureChecks;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return {};
      throw error;
    }
  }

  async #appendLine(file: string, value: unknown): Promise<void> {
    await appendFile(file, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  }

  async #readLines<T>(file: string): Promise<T[]> {
    return (await this.#readTextLines(file)).map((line) => JSON.parse(line) as T);
  }

  async #readTextLines(file: string): Promise<string[]> {
    try {
      const text = await readFile(file, 'utf8');
      return text.split('\n').filter((line) => line !== '');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}

async function countLines(file: string): Promise<number> {
  try {
    const text = await readFile(file, 'utf8');
    return text.split('\n').length - 1;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** A `ProjectLog` on files under `home` (`BATON_HOME`). */
export function createFileProjectLog(options: FileProjectLogOptions): FileProjectLog {
  return new FileProjectLog(options);
}

/** `createFileProjectLog` after the run-once upgrades of `home` (`migrateFileProjects`). */
export async function openFileProjectLog(options: FileProjectLogOptions): Promise<FileProjectLog> {
  await migrateFileProjects(options.home);
  return new FileProjectLog(options);
}
