/**
 * One reader per server process, fanned out to every connected browser.
 *
 * A single loop polls the control API: the project list (to notice status, counter and active
 * session changes) and, for projects that are live (queued or running) or that someone watches,
 * the new entries of their event streams after a per-project cursor. Each change is delivered to
 * every subscriber in memory, so a hundred open tabs cost Redis what one tab costs. The loop runs
 * only while someone is subscribed.
 */
import type { DashboardControl, EventEntry, ProjectRecord } from '../control.js';
import {
  compareStreamIds,
  projectView,
  updateActivity,
  type ProjectActivity,
  type ProjectView,
} from './views.js';

export type HubMessage =
  | { type: 'project'; project: ProjectView }
  | { type: 'removed'; projectId: string }
  | { type: 'event'; projectId: string; entry: EventEntry }
  | { type: 'queue'; counts: Record<string, number> };

export type HubListener = (message: HubMessage) => void;

export interface EventHubOptions {
  control: DashboardControl;
  /** How often the loop polls. Default 500 ms. */
  pollIntervalMs?: number;
  /** Entries read per project per poll. Default 500. */
  batchSize?: number;
  /** Called when a poll fails (Redis down, ...); the loop keeps going. */
  onError?: (error: unknown) => void;
}

export interface EventHub {
  /** Every project change (views) and every event of every live project. */
  subscribe(listener: HubListener): () => void;
  /** Changes and events of one project. */
  subscribeProject(projectId: string, listener: HubListener): () => void;
  /** Latest views known to the hub, refreshed from the control API. */
  snapshot(): Promise<ProjectView[]>;
  /** What the hub knows about a project's current session/turn. */
  activity(projectId: string): ProjectActivity | undefined;
  /** Reads the last `count` entries of a project's stream (pages through it once). */
  tail(projectId: string, count: number): Promise<EventEntry[]>;
  close(): Promise<void>;
}

const LIVE_STATUSES = new Set(['queued', 'running']);

/** The feature counts a `session-end` event reports (`result.featuresAfter`), if well-formed. */
function sessionEndFeatures(
  event: EventEntry['event'],
): { passing: number; total: number } | undefined {
  if (event.type !== 'session-end') return undefined;
  const result = event.result as
    { featuresAfter?: { passing?: unknown; total?: unknown } } | undefined;
  const passing = result?.featuresAfter?.passing;
  const total = result?.featuresAfter?.total;
  return Number.isSafeInteger(passing) && Number.isSafeInteger(total)
    ? { passing: passing as number, total: total as number }
    : undefined;
}

export function createEventHub(options: EventHubOptions): EventHub {
  const { control } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const batchSize = options.batchSize ?? 500;
  const globalListeners = new Set<HubListener>();
  const projectListeners = new Map<string, Set<HubListener>>();
  const views = new Map<string, string>();
  const records = new Map<string, ProjectRecord>();
  const cursors = new Map<string, string>();
  const activities = new Map<string, ProjectActivity>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let polls = 0;
  let lastErrorReportAt = 0;
  let queueJson = '';

  function deliver(projectId: string, message: HubMessage): void {
    for (const listener of globalListeners) listener(message);
    for (const listener of projectListeners.get(projectId) ?? []) listener(message);
  }

  async function tail(projectId: string, count: number): Promise<EventEntry[]> {
    const kept: EventEntry[] = [];
    let fromId: string | undefined;
    for (;;) {
      const page = await control.readEvents(
        projectId,
        fromId === undefined ? { count: 1_000 } : { fromId, count: 1_000 },
      );
      for (const entry of page) kept.push(entry);
      if (kept.length > count) kept.splice(0, kept.length - count);
      const last = page[page.length - 1];
      if (page.length < 1_000 || last === undefined) break;
      fromId = last.id;
    }
    return kept;
  }

  /**
   * `base`: the project record as of the previous poll. Each `session-end` event read in order
   * publishes `base` with that session's feature counts, so a browser sees every step (1 of 3,
   * 2 of 3, ...) even when several sessions end between two polls.
   */
  async function readNewEvents(projectId: string, base: ProjectRecord): Promise<boolean> {
    let cursor = cursors.get(projectId);
    if (cursor === undefined) {
      // First sight of this project: start at the end, learning the current turn from the tail.
      const recent = await tail(projectId, 200);
      let activity = activities.get(projectId);
      for (const entry of recent) activity = updateActivity(activity, entry.event);
      if (activity !== undefined) activities.set(projectId, activity);
      cursors.set(projectId, recent[recent.length - 1]?.id ?? '0-0');
      return activity !== undefined;
    }
    let changed = false;
    for (;;) {
      const entries = await control.readEvents(projectId, { fromId: cursor, count: batchSize });
      for (const entry of entries) {
        if (compareStreamIds(entry.id, cursor) <= 0) continue;
        cursor = entry.id;
        activities.set(projectId, updateActivity(activities.get(projectId), entry.event));
        changed = true;
        deliver(projectId, { type: 'event', projectId, entry });
        const features = sessionEndFeatures(entry.event);
        if (features !== undefined) {
          publishView({
            ...base,
            counters: {
              ...base.counters,
              featuresPassing: features.passing,
              featuresTotal: features.total,
            },
          });
        }
      }
      cursors.set(projectId, cursor);
      if (entries.length < batchSize) break;
    }
    return changed;
  }

  function publishView(project: ProjectRecord): void {
    const view = projectView(project, activities.get(project.id));
    const json = JSON.stringify(view);
    if (views.get(project.id) === json) return;
    views.set(project.id, json);
    deliver(project.id, { type: 'project', project: view });
  }

  async function pollQueue(): Promise<void> {
    const counts = await control.queueCounts();
    const json = JSON.stringify(counts);
    if (json === queueJson) return;
    queueJson = json;
    for (const listener of globalListeners) listener({ type: 'queue', counts });
  }

  async function poll(): Promise<void> {
    // Queue counts change with every job; a few seconds of lag is fine for a summary line.
    if (polls++ % 4 === 0 && globalListeners.size > 0) await pollQueue();
    const projects = await control.listProjects();
    const seen = new Set<string>();
    for (const project of projects) {
      seen.add(project.id);
      const previous = records.get(project.id);
      records.set(project.id, project);
      const watched = (projectListeners.get(project.id)?.size ?? 0) > 0;
      // A status change may come with events we have not read yet (session-end, project-status).
      // Finished projects are not read at all until someone opens them: a dashboard over a
      // thousand old projects costs one project-list read per poll.
      const live =
        LIVE_STATUSES.has(project.status) ||
        watched ||
        (previous !== undefined &&
          (previous.status !== project.status || previous.statusAt !== project.statusAt));
      if (live) await readNewEvents(project.id, previous ?? project);
      publishView(project);
    }
    for (const id of [...records.keys()]) {
      if (seen.has(id)) continue;
      records.delete(id);
      views.delete(id);
      cursors.delete(id);
      activities.delete(id);
      deliver(id, { type: 'removed', projectId: id });
    }
  }

  function hasListeners(): boolean {
    return globalListeners.size > 0 || projectListeners.size > 0;
  }

  function schedule(delay: number): void {
    if (closed || timer !== undefined || running !== undefined || !hasListeners()) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = poll()
        .catch((error: unknown) => {
          // While Redis is down every poll fails: report once a minute, not twice a second.
          const now = Date.now();
          if (now - lastErrorReportAt < 60_000) return;
          lastErrorReportAt = now;
          options.onError?.(error);
        })
        .finally(() => {
          running = undefined;
          schedule(pollIntervalMs);
        });
    }, delay);
    timer.unref?.();
  }

  function removeListener(projectId: string | undefined, listener: HubListener): void {
    if (projectId === undefined) globalListeners.delete(listener);
    else {
      const set = projectListeners.get(projectId);
      set?.delete(listener);
      if (set?.size === 0) projectListeners.delete(projectId);
    }
    if (!hasListeners() && timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
  }

  return {
    subscribe(listener) {
      globalListeners.add(listener);
      schedule(0);
      return () => removeListener(undefined, listener);
    },
    subscribeProject(projectId, listener) {
      let set = projectListeners.get(projectId);
      if (set === undefined) {
        set = new Set();
        projectListeners.set(projectId, set);
      }
      set.add(listener);
      schedule(0);
      return () => removeListener(projectId, listener);
    },
    async snapshot() {
      const projects = await control.listProjects();
      return projects.map((project) => projectView(project, activities.get(project.id)));
    },
    activity(projectId) {
      return activities.get(projectId);
    },
    tail,
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      globalListeners.clear();
      projectListeners.clear();
      await running;
    },
  };
}
