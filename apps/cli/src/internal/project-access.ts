import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { MemoryStore } from '@baton/core';
import type {
  BatonControl,
  CancelResult,
  FileProjectLog,
  PauseResult,
  ProjectRecord,
  SessionSummary,
  StuckProject,
  WebhookDeliveryRecord,
} from '@baton/projects';
import type { ProjectEvent, ProjectStatus } from '@baton/projects/schema';
import type {
  FeatureChecks,
  OperatorGuidance,
  SearchResult,
  Transcript,
  TranscriptSummary,
} from '@baton/session';
import { CliError } from '../errors.js';
import { abortableDelay } from './abortable-delay.js';
import { projectNotFound } from './command-failure.js';
import { openLocalMemory, openLocalProjectLog } from './local-projects.js';
import { openControl, toCommandFailure } from './remote-control.js';

/** Which projects a command works on: the flags every project verb takes. */
export interface ProjectAccessOptions {
  /** `--local`: the `baton run` projects under `BATON_HOME` instead of the ones on Redis. */
  local?: boolean | undefined;
}

/** A project's transcripts, wherever they are kept. */
interface ProjectTranscripts {
  list(): Promise<TranscriptSummary[]>;
  read(sessionId: string): Promise<Transcript | null>;
}

/**
 * Where the CLI reads and guides projects: the `ProjectLog` of `baton run` (files under
 * `BATON_HOME`, `--local`) or the control API on Redis (the workers' projects). A verb reads the
 * same way for both; what only one side keeps (webhook deliveries, stuck-project diagnosis) is
 * empty on the other.
 */
export interface ProjectAccess {
  readonly kind: 'local' | 'redis';
  /**
   * The project, or an exit-7 failure naming where it was looked for. `diagnose` (`baton
   * status`) also says when Redis holds only fragments of it or was never used by a worker.
   */
  requireProject(id: string, options?: { diagnose?: boolean }): Promise<ProjectRecord>;
  /** Every project, oldest first, optionally of one status. */
  listProjects(status?: ProjectStatus | undefined): Promise<ProjectRecord[]>;
  listSessions(id: string): Promise<SessionSummary[]>;
  /** The project's check record (each feature's last check run). */
  readChecks(id: string): Promise<FeatureChecks>;
  /** The project's memory; the caller closes it. */
  memoryStore(id: string): Promise<MemoryStore>;
  transcripts(id: string): Promise<ProjectTranscripts>;
  /** Memory first, then transcripts from the newest session (`@baton/session` searchProject). */
  search(id: string, text: string, options: { limit: number }): Promise<SearchResult>;
  /** Operator guidance for the running (or next) session. */
  say(id: string, text: string): Promise<{ guidance: OperatorGuidance; sessionRunning: boolean }>;
  /**
   * An operator's pause (reason `paused by operator`): no next session starts, and a running one
   * (a worker's, or a `baton run` in another process) gets its end-of-session turn and stops.
   */
  pause(id: string): Promise<PauseResult>;
  /**
   * A user's cancel (reason `cancelled by user`): no next session starts, and a running one (a
   * worker's, or a `baton run` in another process) is aborted.
   */
  cancel(id: string): Promise<CancelResult>;
  /**
   * The project's events from the first (`live: false`); with `follow`, then the new ones as they
   * are written (`live: true`), until `signal` aborts or the caller stops reading.
   */
  events(
    project: ProjectRecord,
    options: { follow: boolean; signal: AbortSignal },
  ): AsyncIterable<{ event: ProjectEvent; live: boolean }>;
  listWebhookDeliveries(id: string): Promise<WebhookDeliveryRecord[]>;
  /** Why nothing runs a queued or running project, or null (a `baton run` project is never stuck). */
  findStuck(project: ProjectRecord): Promise<StuckProject | null>;
  /** Every stuck project and every project Redis lost a part of (none under `BATON_HOME`). */
  findProblems(): ReturnType<BatonControl['findProblems']>;
  /** False on a Redis no worker ever marked (new, or it lost its data); always true locally. */
  hasDeploymentMarker(): Promise<boolean>;
}

/**
 * The one place `--local` is decided: opens the projects `options` name, runs `body` with them and
 * closes what it opened. Errors of the projects package become one-line CLI errors.
 */
export async function withProjects<T>(
  options: ProjectAccessOptions,
  body: (projects: ProjectAccess) => Promise<T>,
): Promise<T> {
  const opened =
    options.local === true
      ? { access: localAccess(await openLocalProjectLog()), close: async () => undefined }
      : await openRedisAccess();
  try {
    return await body(opened.access);
  } catch (error) {
    throw toCommandFailure(error);
  } finally {
    await opened.close();
  }
}

function localAccess(log: FileProjectLog): ProjectAccess {
  const requireProject = async (id: string) => {
    const record = await log.get(id);
    if (record === null) throw projectNotFound(id, `under ${path.join(log.home, 'projects')}`);
    return record;
  };
  const memoryStore = (id: string) => openLocalMemory(log.paths(id).memories);
  const transcripts = async (id: string): Promise<ProjectTranscripts> => {
    // Loaded on use, so the other verbs do not pay for the session package.
    const { createFileTranscriptStore } = await import('@baton/session');
    const store = createFileTranscriptStore({ dir: log.paths(id).transcripts });
    return { list: () => store.list(), read: (sessionId) => store.read(sessionId) };
  };
  return {
    kind: 'local',
    requireProject,
    async listProjects(status) {
      const projects = await log.list();
      return projects.filter((project) => status === undefined || project.status === status);
    },
    listSessions: (id) => log.listSessions(id),
    readChecks: (id) => log.readChecks(id),
    memoryStore,
    transcripts,
    async search(id, text, options) {
      await requireProject(id);
      const { createFileTranscriptStore, searchProject } = await import('@baton/session');
      const memory = await memoryStore(id);
      try {
        const transcripts = createFileTranscriptStore({ dir: log.paths(id).transcripts });
        return await searchProject({ transcripts, memory }, text, options);
      } finally {
        await memory.close();
      }
    },
    async say(id, text) {
      // A running `baton run` reads the project's guidance file at its next model turn.
      const { createFileGuidance, isTerminalStatus, parseGuidanceText, ProjectError } =
        await import('@baton/projects');
      const valid = parseGuidanceText(text);
      const project = await requireProject(id);
      if (isTerminalStatus(project.status)) {
        throw new ProjectError(
          'conflict',
          `project ${id} is ${project.status}; guidance reaches only a queued, running or paused project`,
        );
      }
      const guidance = await createFileGuidance(log.paths(id)).add(valid);
      // A local record shows a session only while one runs (`activeSession`).
      return { guidance, sessionRunning: project.activeSession !== null };
    },
    async pause(id) {
      // The control API's rule (`operatorPause`); the `baton run` running the project (if any)
      // sees the status at its next look (run-project.ts) and pauses its session.
      const { operatorPause } = await import('@baton/projects');
      return operatorPause(log, await requireProject(id));
    },
    async cancel(id) {
      // The control API's rule (`operatorCancel`); the `baton run` running the project (if any)
      // sees the status at its next look (run-project.ts) and aborts its session.
      const { operatorCancel } = await import('@baton/projects');
      return operatorCancel(log, await requireProject(id));
    },
    async *events(project, options) {
      const file = log.paths(project.id).events;
      if ((await stat(file).catch(() => null)) === null) {
        throw new CliError(
          'usage',
          `local project ${project.id} has no event log (${file}): \`baton run\` prints events as it runs; use \`baton run --json\` to keep them.`,
        );
      }
      let lastId: string | undefined;
      for (let live = false; ; live = true) {
        for (;;) {
          const page = await log.readEvents(project.id, {
            count: 500,
            fromId: lastId,
          });
          for (const entry of page) {
            yield { event: entry.event, live };
            lastId = entry.id;
          }
          if (page.length < 500) break;
        }
        if (!options.follow || options.signal.aborted) return;
        // A file has no blocking read: look for new lines four times a second.
        await abortableDelay(250, options.signal);
        if (options.signal.aborted) return;
      }
    },
    listWebhookDeliveries: async () => [],
    findStuck: async () => null,
    findProblems: async () => ({ problems: [], incomplete: null }),
    hasDeploymentMarker: async () => true,
  };
}

async function openRedisAccess(): Promise<{
  access: ProjectAccess;
  close: () => Promise<void>;
}> {
  const control = await openControl();
  return { access: redisAccess(control), close: () => control.close() };
}

function redisAccess(control: BatonControl): ProjectAccess {
  const requireProject = async (id: string, options: { diagnose?: boolean } = {}) => {
    const project = await control.getProject(id);
    if (project !== null) return project;
    if (options.diagnose !== true) {
      throw projectNotFound(
        id,
        'on Redis (see `baton projects`; --local for `baton run` projects)',
      );
    }
    const fragment = await control.findFragment(id);
    if (fragment !== null) {
      throw projectNotFound(
        id,
        `on Redis: only fragments of its record are left (${fragment.join(', ')}), written after Redis lost its data. Nothing runs it; \`baton enqueue --project ${id} ...\` creates it again in their place (its memory and branch are kept)`,
      );
    }
    const marked = (await control.readDeploymentMarker()) !== null;
    throw projectNotFound(
      id,
      marked ? 'on Redis (see `baton status`)' : `on Redis. ${NO_DEPLOYMENT_MARKER.slice(0, -1)}`,
    );
  };
  return {
    kind: 'redis',
    requireProject,
    listProjects: (status) => control.listProjects({ status }),
    listSessions: (id) => control.listSessions(id),
    readChecks: (id) => control.readChecks(id),
    memoryStore: (id) => control.memoryStore(id),
    transcripts: async (id) => ({
      list: () => control.listTranscripts(id),
      read: (sessionId) => control.readTranscript(id, sessionId),
    }),
    async search(id, text, options) {
      await requireProject(id);
      return control.search(id, text, options);
    },
    async say(id, text) {
      const said = await control.say(id, text);
      return { guidance: said.guidance, sessionRunning: said.project.activeSession !== null };
    },
    pause: (id) => control.pause(id),
    cancel: (id) => control.cancel(id),
    async *events(project, options) {
      let lastId: string | undefined;
      // History first, page by page: everything the stream still holds.
      for (;;) {
        const page = await control.readEvents(project.id, {
          count: 500,
          fromId: lastId,
        });
        for (const entry of page) {
          yield { event: entry.event, live: false };
          lastId = entry.id;
        }
        if (page.length < 500) break;
      }
      if (!options.follow || options.signal.aborted) return;
      // Then live, with blocking reads.
      for await (const entry of control.followEvents(project.id, {
        fromId: lastId ?? '0-0',
        blockMs: 2_000,
        signal: options.signal,
      })) {
        yield { event: entry.event, live: true };
      }
    },
    listWebhookDeliveries: (id) => control.listWebhookDeliveries(id),
    findStuck: (project) => control.findStuck(project),
    findProblems: () => control.findProblems(),
    hasDeploymentMarker: async () => (await control.readDeploymentMarker()) !== null,
  };
}

/** What the CLI says on a Redis without the workers' deployment marker (redis-safety.ts). */
export const NO_DEPLOYMENT_MARKER =
  'This Redis has no Baton deployment marker: no worker has run on it yet, or Redis lost its ' +
  "data. A lost project's code is on its branch baton/<project-id> " +
  "(baton adopt --list <repo>, or git ls-remote <repo> 'refs/heads/baton/*'); see docs/operations.md#redis-lost-its-data.";
