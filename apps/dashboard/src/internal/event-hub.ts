/**
 * One reader per server process, fanned out to every connected browser.
 *
 * A single loop asks the projects' change feed every `pollIntervalMs` what changed since the
 * version it last saw (one GET when nothing did, O(changed) otherwise: the fleet's size does not
 * matter) and, between two asks, blocks in one `waitForEvents` (XREAD BLOCK) on the event streams
 * of the projects that are running or that someone watches, after a per-project cursor: a new
 * event reaches the browsers as soon as it is written. Each change is delivered to every
 * subscriber in memory, so a hundred open tabs cost Redis what one tab costs. The loop runs only
 * while someone is subscribed.
 */
import type { DashboardControl, EventEntry, ProjectRecord, ProjectStatus } from '../control.js';
import {
  compareStreamIds,
  projectView,
  updateActivity,
  type ProjectActivity,
  type ProjectView,
} from './views.js';

/**
 * `version` is the change-feed version the hub had read when it sent the message: a page loaded
 * at a later version already holds what the message says.
 */
export type HubMessage =
  | { type: 'project'; project: ProjectView; version: number }
  | { type: 'removed'; projectId: string; version: number }
  | { type: 'event'; projectId: string; entry: EventEntry }
  | { type: 'queue'; counts: Record<string, number> }
  | { type: 'counts'; counts: Record<ProjectStatus, number>; total: number; version: number };

/** What a projects-page client gets on connect: no rows (it pages them), the fleet's numbers. */
interface HubSnapshot {
  counts: Record<ProjectStatus, number>;
  total: number;
  version: number;
}

type HubListener = (message: HubMessage) => void;

export interface EventHubOptions {
  control: DashboardControl;
  /** How often the loop reads the change feed; events arrive in between as they are written. Default 500 ms. */
  pollIntervalMs?: number;
  /** Entries read per project per read. Default 500. */
  batchSize?: number;
  /** Called when a poll fails (Redis down, ...); the loop keeps going. */
  onError?: (error: unknown) => void;
}

export interface EventHub {
  /** Every project change (views), the counts per status and the queue counts. */
  subscribe(listener: HubListener): () => void;
  /** Changes and events of one project. */
  subscribeProject(projectId: string, listener: HubListener): () => void;
  /** The fleet's counts per status and the change-feed version they are as of. */
  snapshot(): Promise<HubSnapshot>;
  /**
   * Settles once the hub follows the project's stream (or found no such project): every event
   * written after that reaches `subscribeProject` listeners, so a reader that takes its own
   * snapshot after this misses nothing between the two.
   */
  following(projectId: string): Promise<void>;
  /** What the hub knows about a project's current session/turn. */
  activity(projectId: string): ProjectActivity | undefined;
  /** Reads the last `count` entries of a project's stream (backwards: the cost is `count`). */
  tail(projectId: string, count: number): Promise<EventEntry[]>;
  close(): Promise<void>;
}

/** Projects whose streams the hub follows unwatched: only a running session writes events. */
const LIVE_STATUSES = new Set<string>(['running']);

/** Running projects followed at most (each costs a cursor in every blocking read). */
const MAX_FOLLOWED = 2_000;

/** Shortest blocking wait: a list that comes due sooner still waits this long for events once. */
const MIN_WAIT_MS = 50;

/** The feature counts a `session-end` event reports (`result.featuresAfter`). */
function sessionEndFeatures(
  event: EventEntry['event'],
): { passing: number; total: number } | undefined {
  return event.type === 'session-end' ? event.result.featuresAfter : undefined;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<void>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  // A rejection nobody waits for is not an unhandled one.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export function createEventHub(options: EventHubOptions): EventHub {
  const { control } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const batchSize = options.batchSize ?? 500;
  const globalListeners = new Set<HubListener>();
  const projectListeners = new Map<string, Set<HubListener>>();
  /** Views last sent, of the projects followed (to send a view only when it changed). */
  const views = new Map<string, string>();
  /** Records of the projects followed: running ones and watched ones. */
  const records = new Map<string, ProjectRecord>();
  const cursors = new Map<string, string>();
  const activities = new Map<string, ProjectActivity>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let polls = 0;
  let lastErrorReportAt = 0;
  let queueJson = '';
  let countsJson = '';
  /** The change-feed version read so far; `undefined` until the first poll. */
  let version: number | undefined;
  /** True once the running projects are followed (someone lists projects). */
  let followsRunning = false;
  /** The projects whose streams the hub waits on, as of the last poll. */
  let liveIds: string[] = [];
  let nextListAt = 0;
  let pendingWait: AbortController | undefined;
  /** Settles when the first poll has read the version the hub delivers changes after. */
  let started = deferred();
  /** Callers of `following`, by project, until a poll has set the project's cursor. */
  const followWaiters = new Map<string, Array<() => void>>();

  function settleFollowWaiters(all: boolean): void {
    for (const [projectId, waiters] of followWaiters) {
      if (!all && !cursors.has(projectId) && records.has(projectId)) continue;
      followWaiters.delete(projectId);
      for (const settle of waiters) settle();
    }
  }

  function deliver(projectId: string, message: HubMessage): void {
    for (const listener of globalListeners) listener(message);
    for (const listener of projectListeners.get(projectId) ?? []) listener(message);
  }

  async function tail(projectId: string, count: number): Promise<EventEntry[]> {
    return control.readEvents(projectId, { last: count });
  }

  /** First sight of a followed project: start at the end, learning the current turn from the tail. */
  async function startAtTail(projectId: string): Promise<void> {
    const recent = await tail(projectId, 200);
    let activity = activities.get(projectId);
    for (const entry of recent) activity = updateActivity(activity, entry.event);
    if (activity !== undefined) activities.set(projectId, activity);
    cursors.set(projectId, recent[recent.length - 1]?.id ?? '0-0');
  }

  /**
   * Delivers entries read after the project's cursor, in order. `base` is the project record as
   * of the previous poll: each `session-end` event publishes it with that session's feature
   * counts, so a browser sees every step (1 of 3, 2 of 3, ...) even when several sessions end
   * between two polls. Returns `base` with the last counts seen.
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
   * the change feed named them, so the events behind a change (session-end, project-status) reach
   * the browsers before the changed view does.
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

  /** Until the next poll is due, delivers the followed projects' events as they are written. */
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
    deliver(project.id, { type: 'project', project: view, version: version ?? 0 });
  }

  async function pollQueue(): Promise<void> {
    const counts = await control.queueCounts();
    const json = JSON.stringify(counts);
    if (json === queueJson) return;
    queueJson = json;
    for (const listener of globalListeners) listener({ type: 'queue', counts });
  }

  async function publishCounts(): Promise<void> {
    if (globalListeners.size === 0) return;
    const { counts, total } = await control.countProjects();
    const json = JSON.stringify([counts, total]);
    if (json === countsJson) return;
    countsJson = json;
    const message: HubMessage = { type: 'counts', counts, total, version: version ?? 0 };
    for (const listener of globalListeners) listener(message);
  }

  /**
   * Running projects are followed for the projects page (their current turn); with only project
   * pages open, only the watched projects are: opening one project costs that project.
   */
  function isFollowed(project: ProjectRecord): boolean {
    return (
      (globalListeners.size > 0 && LIVE_STATUSES.has(project.status)) ||
      (projectListeners.get(project.id)?.size ?? 0) > 0
    );
  }

  /** The first poll: the change-feed version, and the running projects when someone lists them. */
  async function start(): Promise<void> {
    version = await control.projectChangeVersion();
    if (globalListeners.size > 0) await followRunning();
    started.resolve();
    await publishCounts();
  }

  /** Follows every running project (up to MAX_FOLLOWED) from its tail, from the next loop on. */
  async function followRunning(): Promise<void> {
    followsRunning = true;
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<DashboardControl['pageProjects']>> =
        await control.pageProjects({ statuses: ['running'], limit: 500, cursor });
      for (const project of page.projects) records.set(project.id, project);
      cursor = page.nextCursor;
    } while (cursor !== null && records.size < MAX_FOLLOWED);
  }

  /** Follows the watched projects not followed yet from their tails, and settles their waiters. */
  async function followWatched(): Promise<void> {
    await Promise.all(
      [...projectListeners.keys()].map(async (projectId) => {
        if (cursors.has(projectId)) return;
        const project = await control.getProject(projectId);
        if (project === null) return;
        records.set(projectId, project);
        await startAtTail(projectId);
      }),
    );
    settleFollowWaiters(false);
  }

  /** Every change after `version`, in batches; the newest record of each changed project. */
  async function readChanges(): Promise<{ changed: ProjectRecord[]; removed: string[] }> {
    const changed = new Map<string, ProjectRecord>();
    const removed = new Set<string>();
    for (;;) {
      const batch = await control.projectChanges(version ?? 0);
      // A version going back means the feed was reset (Redis flushed): take its word from here.
      version = batch.version;
      for (const project of batch.projects) {
        changed.set(project.id, project);
        removed.delete(project.id);
      }
      for (const id of batch.removed) {
        removed.add(id);
        changed.delete(id);
      }
      if (!batch.more) return { changed: [...changed.values()], removed: [...removed] };
    }
  }

  async function poll(): Promise<void> {
    // Queue counts change with every job; a few seconds of lag is fine for a summary line.
    if (polls++ % 4 === 0 && globalListeners.size > 0) await pollQueue();
    nextListAt = Date.now() + pollIntervalMs;
    let changed: ProjectRecord[] = [];
    let removed: string[] = [];
    // On a first poll, the watched projects are followed alongside the paging of every running
    // project: a page waiting in `following` does not wait for the fleet.
    if (version === undefined) {
      // Both settle before a failure is handled: the error path must not race a running start().
      const results = await Promise.allSettled([start(), followWatched()]);
      for (const result of results) if (result.status === 'rejected') throw result.reason;
    } else {
      ({ changed, removed } = await readChanges());
      // The projects page opened while only project pages were: follow the running ones now.
      if (globalListeners.size > 0 && !followsRunning) await followRunning();
    }
    // A project opened since the last poll is followed from now on.
    for (const projectId of projectListeners.keys()) {
      if (records.has(projectId) || changed.some((project) => project.id === projectId)) continue;
      const project = await control.getProject(projectId);
      if (project !== null) records.set(projectId, project);
    }
    const bases = new Map<string, ProjectRecord>();
    for (const project of changed) {
      // Its events up to now go out before its new view (a stream it had a cursor on).
      if (cursors.has(project.id)) bases.set(project.id, records.get(project.id) ?? project);
    }
    if (bases.size > 0) await catchUp(bases);
    for (const project of changed) {
      if (isFollowed(project) || records.has(project.id)) records.set(project.id, project);
      publishView(project);
    }
    // The watched projects first: a page waiting in `following` gets its snapshot without
    // waiting for the tails of every other running project.
    const watchedFirst = [...records.values()].sort(
      (left, right) =>
        Number(projectListeners.has(right.id)) - Number(projectListeners.has(left.id)),
    );
    const untailed: string[] = [];
    for (const project of watchedFirst) {
      if (!isFollowed(project)) {
        // Finished or queued and unwatched: nothing writes its stream until it runs again.
        records.delete(project.id);
        cursors.delete(project.id);
        continue;
      }
      if (cursors.has(project.id)) continue;
      if (projectListeners.has(project.id)) await startAtTail(project.id);
      else untailed.push(project.id);
    }
    settleFollowWaiters(false);
    // One pipelined batch per 100 projects rather than one round trip each.
    for (let start = 0; start < untailed.length; start += 100) {
      await Promise.all(untailed.slice(start, start + 100).map(startAtTail));
    }
    for (const project of records.values()) publishView(project);
    // Views of projects nobody follows are only kept to skip repeats within one poll.
    for (const id of views.keys()) if (!records.has(id)) views.delete(id);
    for (const id of removed) {
      records.delete(id);
      views.delete(id);
      cursors.delete(id);
      activities.delete(id);
      deliver(id, { type: 'removed', projectId: id, version: version ?? 0 });
    }
    liveIds = [...records.keys()];
    // Followed now, or not a project at all.
    settleFollowWaiters(false);
    if (changed.length > 0 || removed.length > 0) await publishCounts();
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
          // Their own reads fail the same way and say so.
          settleFollowWaiters(true);
          if (version === undefined) {
            // Snapshots waiting for the first poll read the version themselves instead.
            started.reject(error);
            started = deferred();
          }
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
    if (projectId === undefined) {
      globalListeners.delete(listener);
      // The next poll drops the running projects nobody watches.
      if (globalListeners.size === 0) followsRunning = false;
    } else {
      const set = projectListeners.get(projectId);
      set?.delete(listener);
      if (set?.size === 0) projectListeners.delete(projectId);
    }
    if (!hasListeners()) {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      pendingWait?.abort();
      // Nobody listens: the next subscriber starts from the feed's version of then.
      version = undefined;
      followsRunning = false;
      started = deferred();
      records.clear();
      views.clear();
      cursors.clear();
      countsJson = '';
      queueJson = '';
    }
  }

  /** A project nobody waited on is opened: poll now rather than at the next due poll. */
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
      if (version !== undefined && !followsRunning) {
        // Project pages only so far: poll now to follow the running projects for this listener.
        nextListAt = 0;
        pendingWait?.abort();
      }
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
      // The hub's own version: every change after it reaches the subscriber that asked.
      const current =
        version ??
        (await started.promise.then(
          () => version,
          () => undefined,
        )) ??
        (await control.projectChangeVersion());
      const { counts, total } = await control.countProjects();
      return { counts, total, version: current };
    },
    following(projectId) {
      if (cursors.has(projectId)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const waiters = followWaiters.get(projectId) ?? [];
        waiters.push(resolve);
        followWaiters.set(projectId, waiters);
      });
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
      settleFollowWaiters(true);
      await running;
    },
  };
}
