import type { DashboardControl, EventEntry, ProjectRecord } from '../../control.js';
import { compareStreamIds, projectView, updateActivity, type ProjectActivity } from '../views.js';
import type { HubListeners } from './hub-listeners.js';

/** What the hub keeps of one project it follows (running, or someone watches it). */
interface FollowedProject {
  /** The newest record read (with the feature counts of the last `session-end` delivered). */
  record: ProjectRecord;
  /** The id of the last stream entry delivered; unset until the stream's tail was read. */
  cursor?: string | undefined;
  /** The view last sent, as JSON: a view goes out only when it changed. */
  viewJson?: string | undefined;
}

/** Events read from the tail when the hub starts following a project (its current turn). */
const TAIL_EVENTS = 200;

/** The feature counts a `session-end` event reports (`result.featuresAfter`). */
function sessionEndFeatures(
  event: EventEntry['event'],
): { passing: number; total: number } | undefined {
  return event.type === 'session-end' ? event.result.featuresAfter : undefined;
}

/**
 * The projects the hub follows, one record each, and the delivery of their events and views.
 * Activities outlive following: the API still shows a finished project's last turn.
 */
export class FollowedProjects {
  readonly #control: DashboardControl;
  readonly #listeners: HubListeners;
  readonly #projects = new Map<string, FollowedProject>();
  readonly #activities = new Map<string, ProjectActivity>();
  /** Callers of `whenTailed`, by project, until the project's stream has a cursor. */
  readonly #waiters = new Map<string, Array<() => void>>();

  constructor(control: DashboardControl, listeners: HubListeners) {
    this.#control = control;
    this.#listeners = listeners;
  }

  get size(): number {
    return this.#projects.size;
  }

  has(projectId: string): boolean {
    return this.#projects.has(projectId);
  }

  /** Followed and its stream's tail read: every event written from now on is delivered. */
  isTailed(projectId: string): boolean {
    return this.#projects.get(projectId)?.cursor !== undefined;
  }

  record(projectId: string): ProjectRecord | undefined {
    return this.#projects.get(projectId)?.record;
  }

  ids(): string[] {
    return [...this.#projects.keys()];
  }

  records(): ProjectRecord[] {
    return [...this.#projects.values()].map((project) => project.record);
  }

  /** Follows the project, or keeps its newer record if it is followed already. */
  follow(record: ProjectRecord): void {
    const project = this.#projects.get(record.id);
    if (project === undefined) this.#projects.set(record.id, { record });
    else project.record = record;
  }

  /** Stops following (nothing writes its stream until it runs again or is watched). */
  unfollow(projectId: string): void {
    this.#projects.delete(projectId);
  }

  /** The project was deleted: forget it, its activity included. */
  forget(projectId: string): void {
    this.#projects.delete(projectId);
    this.#activities.delete(projectId);
  }

  /** Nobody listens: the next listener starts from scratch (activities stay). */
  clear(): void {
    this.#projects.clear();
  }

  activity(projectId: string): ProjectActivity | undefined {
    return this.#activities.get(projectId);
  }

  /** The cursors of those of `projectIds` that have one. */
  cursorsOf(projectIds: Iterable<string>): Record<string, string> {
    const result: Record<string, string> = {};
    for (const id of projectIds) {
      const cursor = this.#projects.get(id)?.cursor;
      if (cursor !== undefined) result[id] = cursor;
    }
    return result;
  }

  /** First sight of a followed project: start at the end, learning the current turn from the tail. */
  async startAtTail(projectId: string): Promise<void> {
    const recent = await this.#control.readEvents(projectId, { last: TAIL_EVENTS });
    let activity = this.#activities.get(projectId);
    for (const entry of recent) activity = updateActivity(activity, entry.event);
    if (activity !== undefined) this.#activities.set(projectId, activity);
    const project = this.#projects.get(projectId);
    // Unfollowed while the tail was read (everyone left): the next follow reads it again.
    if (project !== undefined) project.cursor = recent[recent.length - 1]?.id ?? '0-0';
  }

  /**
   * Delivers entries read after the project's cursor, in order. `base` is the project record as
   * of the previous poll: each `session-end` event publishes it with that session's feature
   * counts, so a browser sees every step (1 of 3, 2 of 3, ...) even when several sessions end
   * between two polls. Returns `base` with the last counts seen.
   */
  deliverEntries(
    projectId: string,
    entries: EventEntry[],
    base: ProjectRecord,
    version: number,
  ): ProjectRecord {
    const project = this.#projects.get(projectId);
    let cursor = project?.cursor ?? '0-0';
    for (const entry of entries) {
      if (compareStreamIds(entry.id, cursor) <= 0) continue;
      cursor = entry.id;
      this.#activities.set(projectId, updateActivity(this.#activities.get(projectId), entry.event));
      this.#listeners.deliver(projectId, { type: 'event', projectId, entry });
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
        this.publishView(base, version);
      }
    }
    if (project !== undefined) project.cursor = cursor;
    return base;
  }

  /** Sends the project's view unless it is the one last sent (always, for a project not followed). */
  publishView(record: ProjectRecord, version: number): void {
    const view = projectView(record, this.#activities.get(record.id));
    const json = JSON.stringify(view);
    const project = this.#projects.get(record.id);
    if (project !== undefined) {
      if (project.viewJson === json) return;
      project.viewJson = json;
    }
    this.#listeners.deliver(record.id, { type: 'project', project: view, version });
  }

  /** Settles once the project's stream has a cursor, or it turns out not to be followed. */
  whenTailed(projectId: string): Promise<void> {
    if (this.isTailed(projectId)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiters = this.#waiters.get(projectId) ?? [];
      waiters.push(resolve);
      this.#waiters.set(projectId, waiters);
    });
  }

  /** Settles the waiters whose project is tailed or not followed; with `all`, every waiter. */
  settleWaiters(all: boolean): void {
    for (const [projectId, waiters] of this.#waiters) {
      if (!all && !this.isTailed(projectId) && this.has(projectId)) continue;
      this.#waiters.delete(projectId);
      for (const settle of waiters) settle();
    }
  }
}
