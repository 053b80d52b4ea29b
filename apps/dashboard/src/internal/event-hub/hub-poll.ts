import type { DashboardControl, ProjectRecord } from '../../control.js';
import type { FollowedProjects } from './followed-projects.js';
import type { HubFeed } from './hub-feed.js';
import type { HubListeners } from './hub-listeners.js';

/** Projects whose streams the hub follows unwatched: only a running session writes events. */
const LIVE_STATUSES = new Set<string>(['running']);

/** Shortest blocking wait: a list that comes due sooner still waits this long for events once. */
const MIN_WAIT_MS = 50;

/** Tails read in one pipelined batch when many projects are followed at once. */
const TAIL_BATCH = 100;

export interface HubPollOptions {
  control: DashboardControl;
  listeners: HubListeners;
  followed: FollowedProjects;
  feed: HubFeed;
  /** How often the change feed is read. */
  pollIntervalMs: number;
  /** Entries read per project per read. */
  batchSize: number;
}

/**
 * One round of the hub's loop: `poll` reads what changed in the change feed and delivers it,
 * then `waitForEvents` delivers the followed projects' events as they are written until the
 * next poll is due.
 */
export class HubPoll {
  readonly #control: DashboardControl;
  readonly #listeners: HubListeners;
  readonly #followed: FollowedProjects;
  readonly #feed: HubFeed;
  readonly #pollIntervalMs: number;
  readonly #batchSize: number;
  /** The projects whose streams the hub waits on, as of the last poll. */
  #liveIds: string[] = [];
  #nextPollAt = 0;
  #pendingWait: AbortController | undefined;
  #polls = 0;
  #closed = false;

  constructor(options: HubPollOptions) {
    this.#control = options.control;
    this.#listeners = options.listeners;
    this.#followed = options.followed;
    this.#feed = options.feed;
    this.#pollIntervalMs = options.pollIntervalMs;
    this.#batchSize = options.batchSize;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Milliseconds until the next poll is due. */
  get dueInMs(): number {
    return Math.max(0, this.#nextPollAt - Date.now());
  }

  /** The hub waits on the project's stream already. */
  waitsOn(projectId: string): boolean {
    return this.#liveIds.includes(projectId);
  }

  /** Ends the blocking wait: the next poll is due now. */
  pollNow(): void {
    this.#nextPollAt = 0;
    this.#pendingWait?.abort();
  }

  /** Nobody listens: ends the wait and forgets the followed projects. */
  reset(): void {
    this.#pendingWait?.abort();
    this.#followed.clear();
  }

  close(): void {
    this.#closed = true;
    this.#pendingWait?.abort();
  }

  async poll(): Promise<void> {
    // Queue counts change with every job; a few seconds of lag is fine for a summary line.
    if (this.#polls++ % 4 === 0 && this.#listeners.listsProjects)
      await this.#feed.publishQueueCounts();
    this.#nextPollAt = Date.now() + this.#pollIntervalMs;
    const { changed, removed } = await this.#feed.read();
    await this.#followOpened(changed);
    await this.#catchUp(changed);
    this.#applyChanged(changed);
    await this.#tailFollowed();
    for (const project of this.#followed.records()) {
      this.#followed.publishView(project, this.#feed.version);
    }
    this.#applyRemoved(removed);
    this.#liveIds = this.#followed.ids();
    // Followed now, or not a project at all.
    this.#followed.settleWaiters(false);
    if (changed.length > 0 || removed.length > 0) await this.#feed.publishCounts();
  }

  /** Until the next poll is due, delivers the followed projects' events as they are written. */
  async waitForEvents(): Promise<void> {
    while (!this.#closed && !this.#listeners.isEmpty) {
      const waitFor = this.#followed.cursorsOf(this.#liveIds);
      if (Object.keys(waitFor).length === 0) return;
      this.#pendingWait = new AbortController();
      let results: Awaited<ReturnType<DashboardControl['waitForEvents']>>;
      try {
        results = await this.#control.waitForEvents(waitFor, {
          blockMs: Math.max(MIN_WAIT_MS, this.#nextPollAt - Date.now()),
          count: this.#batchSize,
          signal: this.#pendingWait.signal,
        });
      } finally {
        this.#pendingWait = undefined;
      }
      for (const { projectId, entries } of results) {
        const record = this.#followed.record(projectId);
        if (record === undefined) continue;
        // Keep the counts of a session-end read here: the next view must not go back to the old.
        const updated = this.#followed.deliverEntries(
          projectId,
          entries,
          record,
          this.#feed.version,
        );
        this.#followed.follow(updated);
        this.#followed.publishView(updated, this.#feed.version);
      }
      if (Date.now() >= this.#nextPollAt) return;
    }
  }

  /** A project opened since the last poll is followed from now on. */
  async #followOpened(changed: ProjectRecord[]): Promise<void> {
    for (const projectId of this.#listeners.watchedIds()) {
      if (this.#followed.has(projectId) || changed.some((project) => project.id === projectId)) {
        continue;
      }
      const project = await this.#control.getProject(projectId);
      if (project !== null) this.#followed.follow(project);
    }
  }

  /**
   * Reads, without waiting, what the changed projects' streams hold beyond their cursors, so the
   * events behind a change (session-end, project-status) reach the browsers before the changed
   * view does. Only streams the hub has a cursor on.
   */
  async #catchUp(changed: ProjectRecord[]): Promise<void> {
    const bases = new Map<string, ProjectRecord>();
    for (const project of changed) {
      if (this.#followed.isTailed(project.id)) {
        bases.set(project.id, this.#followed.record(project.id) ?? project);
      }
    }
    while (bases.size > 0) {
      const results = await this.#control.waitForEvents(this.#followed.cursorsOf(bases.keys()), {
        blockMs: 0,
        count: this.#batchSize,
      });
      let full = false;
      for (const { projectId, entries } of results) {
        const base = bases.get(projectId);
        if (base === undefined) continue;
        bases.set(
          projectId,
          this.#followed.deliverEntries(projectId, entries, base, this.#feed.version),
        );
        full ||= entries.length >= this.#batchSize;
      }
      if (!full) return;
    }
  }

  /** The changed projects' new views; the followed ones keep their new record. */
  #applyChanged(changed: ProjectRecord[]): void {
    for (const project of changed) {
      if (this.#isFollowed(project) || this.#followed.has(project.id))
        this.#followed.follow(project);
      this.#followed.publishView(project, this.#feed.version);
    }
  }

  /**
   * Drops the projects no longer followed and reads the tails of the newly followed: the watched
   * ones first (a page waiting in `following` gets its snapshot without waiting for the tails of
   * every other running project), then the rest in pipelined batches.
   */
  async #tailFollowed(): Promise<void> {
    const watchedFirst = this.#followed
      .records()
      .sort(
        (left, right) =>
          Number(this.#listeners.watches(right.id)) - Number(this.#listeners.watches(left.id)),
      );
    const untailed: string[] = [];
    for (const project of watchedFirst) {
      if (!this.#isFollowed(project)) {
        // Finished or queued and unwatched: nothing writes its stream until it runs again.
        this.#followed.unfollow(project.id);
        continue;
      }
      if (this.#followed.isTailed(project.id)) continue;
      if (this.#listeners.watches(project.id)) await this.#followed.startAtTail(project.id);
      else untailed.push(project.id);
    }
    this.#followed.settleWaiters(false);
    for (let start = 0; start < untailed.length; start += TAIL_BATCH) {
      await Promise.all(
        untailed.slice(start, start + TAIL_BATCH).map((id) => this.#followed.startAtTail(id)),
      );
    }
  }

  #applyRemoved(removed: string[]): void {
    for (const id of removed) {
      this.#followed.forget(id);
      this.#listeners.deliver(id, { type: 'removed', projectId: id, version: this.#feed.version });
    }
  }

  /**
   * Running projects are followed for the projects page (their current turn); with only project
   * pages open, only the watched projects are: opening one project costs that project.
   */
  #isFollowed(project: ProjectRecord): boolean {
    return (
      (this.#listeners.listsProjects && LIVE_STATUSES.has(project.status)) ||
      this.#listeners.watches(project.id)
    );
  }
}
