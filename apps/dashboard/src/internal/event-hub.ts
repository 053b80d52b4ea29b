/**
 * One reader per server process, fanned out to every connected browser.
 *
 * A single loop lists the projects every `pollIntervalMs` (to notice status, counter and active
 * session changes) and, between two lists, blocks in one `waitForEvents` (XREAD BLOCK over every
 * stream) on the event streams of the projects that are live (queued or running), that someone
 * watches or that just changed, after a per-project cursor: a new event reaches the browsers as
 * soon as it is written, not at the next poll. Each change is delivered to every subscriber in
 * memory, so a hundred open tabs cost Redis what one tab costs. The loop runs only while someone
 * is subscribed.
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
  /** How often the loop re-lists the projects; events arrive in between as they are written. Default 500 ms. */
  pollIntervalMs?: number;
  /** Entries read per project per read. Default 500. */
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

/** Shortest blocking wait: a list that comes due sooner still waits this long for events once. */
const MIN_WAIT_MS = 50;

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
  /** The projects whose streams the hub waits on, as of the last list. */
  let liveIds: string[] = [];
  let nextListAt = 0;
  let pendingWait: AbortController | undefined;

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

  /** First sight of a project: start at the end, learning the current turn from the tail. */
  async function startAtTail(projectId: string): Promise<void> {
    const recent = await tail(projectId, 200);
    let activity = activities.get(projectId);
    for (const entry of recent) activity = updateActivity(activity, entry.event);
    if (activity !== undefined) activities.set(projectId, activity);
    cursors.set(projectId, recent[recent.length - 1]?.id ?? '0-0');
  }

  /**
   * Delivers entries read after the project's cursor, in order. `base` is the project record as
   * of the previous list: each `session-end` event publishes it with that session's feature
   * counts, so a browser sees every step (1 of 3, 2 of 3, ...) even when several sessions end
   * between two lists. Returns `base` with the last counts seen.
   */
  function deliverEntries(projectId: string, entries: EventEntry[], base: ProjectRecord) {
    let cursor = cursors.get(projectId) ?? '0-0';
    for (const entry of entries) {
      if (compareStreamIds(entry.id, cursor) <= 0) continue;
      cursor = entry.id;
      activities.set(projectId, updateActivity(activities.get(projectId), entry.event));
      deliver(projectId, { type: 'event', projectId, entry });
      const features = sessionEndFeatures(entry.event);
      if (features !== undefined) {
        base = {
          ...base,
          counters: {
            ...base.counters,
            featuresPassing: features.passing,
            featuresTotal: features.total,
          },
        };
        publishView(base);
      }
    }
    cursors.set(projectId, cursor);
    return base;
  }

  function cursorsOf(projectIds: Iterable<string>): Record<string, string> {
    const result: Record<string, string> = {};
    for (const id of projectIds) {
      const cursor = cursors.get(id);
      if (cursor !== undefined) result[id] = cursor;
    }
    return result;
  }

  /**
   * Reads, without waiting, what the projects' streams hold beyond their cursors. Runs right after
   * a list for projects whose record changed, so the events behind a change (session-end,
   * project-status) reach the browsers before the changed view does.
   */
  async function catchUp(bases: Map<string, ProjectRecord>): Promise<void> {
    for (;;) {
      const results = await control.waitForEvents(cursorsOf(bases.keys()), {
        blockMs: 0,
        count: batchSize,
      });
      let full = false;
      for (const { projectId, entries } of results) {
        const base = bases.get(projectId);
        if (base !== undefined) bases.set(projectId, deliverEntries(projectId, entries, base));
        full ||= entries.length >= batchSize;
      }
      if (!full) return;
    }
  }

  /** Until the next list is due, delivers the live projects' events as they are written. */
  async function waitForEvents(): Promise<void> {
    while (!closed && hasListeners()) {
      const waitFor = cursorsOf(liveIds);
      if (Object.keys(waitFor).length === 0) return;
      pendingWait = new AbortController();
      let results: Awaited<ReturnType<DashboardControl['waitForEvents']>>;
      try {
        results = await control.waitForEvents(waitFor, {
          blockMs: Math.max(MIN_WAIT_MS, nextListAt - Date.now()),
          count: batchSize,
          signal: pendingWait.signal,
        });
      } finally {
        pendingWait = undefined;
      }
      for (const { projectId, entries } of results) {
        const record = records.get(projectId);
        if (record === undefined) continue;
        // Keep the counts of a session-end read here: the next view must not go back to the old.
        const updated = deliverEntries(projectId, entries, record);
        records.set(projectId, updated);
        publishView(updated);
      }
      if (Date.now() >= nextListAt) return;
    }
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
    nextListAt = Date.now() + pollIntervalMs;
    const projects = await control.listProjects();
    const seen = new Set<string>();
    const live: string[] = [];
    const changed = new Map<string, ProjectRecord>();
    for (const project of projects) {
      seen.add(project.id);
      const previous = records.get(project.id);
      const watched = (projectListeners.get(project.id)?.size ?? 0) > 0;
      // A status change may come with events we have not read yet (session-end, project-status).
      // Finished projects are not read at all until someone opens them: a dashboard over a
      // thousand old projects costs one project-list read per poll.
      const isLive =
        LIVE_STATUSES.has(project.status) ||
        watched ||
        (previous !== undefined &&
          (previous.status !== project.status || previous.statusAt !== project.statusAt));
      if (!isLive) continue;
      live.push(project.id);
      if (!cursors.has(project.id)) await startAtTail(project.id);
      else if (previous !== undefined && JSON.stringify(previous) !== JSON.stringify(project))
        changed.set(project.id, previous);
    }
    if (changed.size > 0) await catchUp(changed);
    for (const project of projects) {
      records.set(project.id, project);
      publishView(project);
    }
    liveIds = live;
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
        .then(waitForEvents)
        .catch((error: unknown) => {
          // While Redis is down every poll fails: report once a minute, not twice a second.
          const now = Date.now();
          if (now - lastErrorReportAt < 60_000) return;
          lastErrorReportAt = now;
          options.onError?.(error);
        })
        .finally(() => {
          running = undefined;
          schedule(Math.max(0, nextListAt - Date.now()));
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
    if (!hasListeners()) {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      pendingWait?.abort();
    }
  }

  /** A project nobody waited on is opened: list now rather than at the next due list. */
  function listSoon(projectId: string): void {
    if (liveIds.includes(projectId)) {
      schedule(0);
      return;
    }
    nextListAt = 0;
    pendingWait?.abort();
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    schedule(0);
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
      listSoon(projectId);
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
      pendingWait?.abort();
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      globalListeners.clear();
      projectListeners.clear();
      await running;
    },
  };
}
