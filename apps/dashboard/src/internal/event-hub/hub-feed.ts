import type { DashboardControl, ProjectRecord, ProjectStatus } from '../../control.js';
import type { FollowedProjects } from './followed-projects.js';
import type { HubListeners } from './hub-listeners.js';

/** Running projects followed at most (each costs a cursor in every blocking read). */
const MAX_FOLLOWED = 2_000;

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

export interface FeedChanges {
  /** The newest record of each changed project. */
  changed: ProjectRecord[];
  removed: string[];
}

/**
 * The hub's side of the projects' change feed: the version read so far, the running projects
 * followed for the projects page, and the fleet's counts (per status, and the queue's).
 */
export class HubFeed {
  readonly #control: DashboardControl;
  readonly #listeners: HubListeners;
  readonly #followed: FollowedProjects;
  /** The change-feed version read so far; `undefined` until the first poll. */
  #version: number | undefined;
  /** True once the running projects are followed (someone lists projects). */
  #followsRunning = false;
  /** Settles when the first poll has read the version the hub delivers changes after. */
  #started = deferred();
  #queueJson = '';
  #countsJson = '';

  constructor(control: DashboardControl, listeners: HubListeners, followed: FollowedProjects) {
    this.#control = control;
    this.#listeners = listeners;
    this.#followed = followed;
  }

  /** The version messages carry. */
  get version(): number {
    return this.#version ?? 0;
  }

  /** Project pages only were open so far: the running projects are not followed yet. */
  get lacksRunning(): boolean {
    return this.#version !== undefined && !this.#followsRunning;
  }

  /** The projects page closed: the next poll drops the running projects nobody watches. */
  stopFollowingRunning(): void {
    this.#followsRunning = false;
  }

  /** Nobody listens: the next subscriber starts from the feed's version of then. */
  reset(): void {
    this.#version = undefined;
    this.#followsRunning = false;
    this.#started = deferred();
    this.#countsJson = '';
    this.#queueJson = '';
  }

  /** A poll failed: snapshots waiting for the first poll read the version themselves instead. */
  failed(error: unknown): void {
    if (this.#version !== undefined) return;
    this.#started.reject(error);
    this.#started = deferred();
  }

  /** The hub's own version: every change after it reaches the subscriber that asked. */
  async snapshotVersion(): Promise<number> {
    return (
      this.#version ??
      (await this.#started.promise.then(
        () => this.#version,
        () => undefined,
      )) ??
      (await this.#control.projectChangeVersion())
    );
  }

  /**
   * What changed since the last poll. On a first poll, the version to start after, with the
   * watched projects followed alongside the paging of every running project: a page waiting in
   * `following` does not wait for the fleet.
   */
  async read(): Promise<FeedChanges> {
    if (this.#version === undefined) {
      // Both settle before a failure is handled: the error path must not race a running start.
      const results = await Promise.allSettled([this.#start(), this.#followWatched()]);
      for (const result of results) if (result.status === 'rejected') throw result.reason;
      return { changed: [], removed: [] };
    }
    const changes = await this.#readChanges();
    // The projects page opened while only project pages were: follow the running ones now.
    if (this.#listeners.listsProjects && !this.#followsRunning) await this.#followRunning();
    return changes;
  }

  async publishQueueCounts(): Promise<void> {
    const counts = await this.#control.queueCounts();
    const json = JSON.stringify(counts);
    if (json === this.#queueJson) return;
    this.#queueJson = json;
    this.#listeners.deliverToFleet({ type: 'queue', counts });
  }

  async publishCounts(): Promise<void> {
    if (!this.#listeners.listsProjects) return;
    const { counts, total }: { counts: Record<ProjectStatus, number>; total: number } =
      await this.#control.countProjects();
    const json = JSON.stringify([counts, total]);
    if (json === this.#countsJson) return;
    this.#countsJson = json;
    this.#listeners.deliverToFleet({ type: 'counts', counts, total, version: this.version });
  }

  /** The first poll: the change-feed version, and the running projects when someone lists them. */
  async #start(): Promise<void> {
    this.#version = await this.#control.projectChangeVersion();
    if (this.#listeners.listsProjects) await this.#followRunning();
    this.#started.resolve();
    await this.publishCounts();
  }

  /** Follows every running project (up to MAX_FOLLOWED) from its tail, from the next loop on. */
  async #followRunning(): Promise<void> {
    this.#followsRunning = true;
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<DashboardControl['pageProjects']>> =
        await this.#control.pageProjects({ statuses: ['running'], limit: 500, cursor });
      for (const project of page.projects) this.#followed.follow(project);
      cursor = page.nextCursor;
    } while (cursor !== null && this.#followed.size < MAX_FOLLOWED);
  }

  /** Follows the watched projects not followed yet from their tails, and settles their waiters. */
  async #followWatched(): Promise<void> {
    await Promise.all(
      this.#listeners.watchedIds().map(async (projectId) => {
        if (this.#followed.isTailed(projectId)) return;
        const project = await this.#control.getProject(projectId);
        if (project === null) return;
        this.#followed.follow(project);
        await this.#followed.startAtTail(projectId);
      }),
    );
    this.#followed.settleWaiters(false);
  }

  /** Every change after `version`, in batches; the newest record of each changed project. */
  async #readChanges(): Promise<FeedChanges> {
    const changed = new Map<string, ProjectRecord>();
    const removed = new Set<string>();
    for (;;) {
      const batch = await this.#control.projectChanges(this.#version ?? 0);
      // A version going back means the feed was reset (Redis flushed): take its word from here.
      this.#version = batch.version;
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
}
