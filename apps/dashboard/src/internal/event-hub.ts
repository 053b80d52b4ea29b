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
 *
 * The parts: `event-hub/hub-listeners.ts` (who listens), `event-hub/followed-projects.ts` (one
 * record per followed project: record, cursor, last view), `event-hub/hub-feed.ts` (the change-feed
 * version, the running projects, the fleet's counts), `event-hub/hub-poll.ts` (the poll as named
 * steps and the blocking wait between polls). This file schedules the loop.
 */
import type { DashboardControl, EventEntry, ProjectStatus } from '../control.js';
import { FollowedProjects } from './event-hub/followed-projects.js';
import { HubFeed } from './event-hub/hub-feed.js';
import { HubListeners, type HubListener } from './event-hub/hub-listeners.js';
import { HubPoll } from './event-hub/hub-poll.js';
import type { ProjectActivity } from './views.js';

export type { HubMessage } from './event-hub/hub-listeners.js';

/** What a projects-page client gets on connect: no rows (it pages them), the fleet's numbers. */
interface HubSnapshot {
  counts: Record<ProjectStatus, number>;
  total: number;
  version: number;
}

export interface EventHubOptions {
  control: DashboardControl;
  /** How often the loop reads the change feed; events arrive in between as they are written. Default 500 ms. */
  pollIntervalMs?: number | undefined;
  /** Entries read per project per read. Default 500. */
  batchSize?: number | undefined;
  /** Called when a poll fails (Redis down, ...); the loop keeps going. */
  onError?: ((error: unknown) => void) | undefined;
}

/** While Redis is down every poll fails: report once a minute, not twice a second. */
const ERROR_REPORT_INTERVAL_MS = 60_000;

export class EventHub {
  readonly #control: DashboardControl;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #listeners = new HubListeners();
  readonly #followed: FollowedProjects;
  readonly #feed: HubFeed;
  readonly #poll: HubPoll;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #lastErrorReportAt = 0;

  constructor(options: EventHubOptions) {
    this.#control = options.control;
    this.#onError = options.onError;
    this.#followed = new FollowedProjects(options.control, this.#listeners);
    this.#feed = new HubFeed(options.control, this.#listeners, this.#followed);
    this.#poll = new HubPoll({
      control: options.control,
      listeners: this.#listeners,
      followed: this.#followed,
      feed: this.#feed,
      pollIntervalMs: options.pollIntervalMs ?? 500,
      batchSize: options.batchSize ?? 500,
    });
  }

  /** Every project change (views), the counts per status and the queue counts. */
  subscribe(listener: HubListener): () => void {
    this.#listeners.addFleet(listener);
    // Project pages only so far: poll now to follow the running projects for this listener.
    if (this.#feed.lacksRunning) this.#poll.pollNow();
    this.#schedule(0);
    return () => this.#removeListener(undefined, listener);
  }

  /** Changes and events of one project. */
  subscribeProject(projectId: string, listener: HubListener): () => void {
    this.#listeners.addProject(projectId, listener);
    this.#pollSoon(projectId);
    return () => this.#removeListener(projectId, listener);
  }

  /** The fleet's counts per status and the change-feed version they are as of. */
  async snapshot(): Promise<HubSnapshot> {
    const version = await this.#feed.snapshotVersion();
    const { counts, total } = await this.#control.countProjects();
    return { counts, total, version };
  }

  /**
   * Settles once the hub follows the project's stream (or found no such project): every event
   * written after that reaches `subscribeProject` listeners, so a reader that takes its own
   * snapshot after this misses nothing between the two.
   */
  following(projectId: string): Promise<void> {
    return this.#followed.whenTailed(projectId);
  }

  /** What the hub knows about a project's current session/turn. */
  activity(projectId: string): ProjectActivity | undefined {
    return this.#followed.activity(projectId);
  }

  /** Reads the last `count` entries of a project's stream (backwards: the cost is `count`). */
  async tail(projectId: string, count: number): Promise<EventEntry[]> {
    return this.#control.readEvents(projectId, { last: count });
  }

  async close(): Promise<void> {
    this.#poll.close();
    this.#clearTimer();
    this.#listeners.clear();
    this.#followed.settleWaiters(true);
    await this.#running;
  }

  #schedule(delay: number): void {
    if (this.#poll.closed || this.#timer !== undefined || this.#running !== undefined) return;
    if (this.#listeners.isEmpty) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#poll
        .poll()
        .then(() => this.#poll.waitForEvents())
        .catch((error: unknown) => this.#pollFailed(error))
        .finally(() => {
          this.#running = undefined;
          this.#schedule(this.#poll.dueInMs);
        });
    }, delay);
    this.#timer.unref?.();
  }

  #pollFailed(error: unknown): void {
    // Their own reads fail the same way and say so.
    this.#followed.settleWaiters(true);
    this.#feed.failed(error);
    const now = Date.now();
    if (now - this.#lastErrorReportAt < ERROR_REPORT_INTERVAL_MS) return;
    this.#lastErrorReportAt = now;
    this.#onError?.(error);
  }

  #removeListener(projectId: string | undefined, listener: HubListener): void {
    if (projectId === undefined) {
      this.#listeners.removeFleet(listener);
      // The next poll drops the running projects nobody watches.
      if (!this.#listeners.listsProjects) this.#feed.stopFollowingRunning();
    } else {
      this.#listeners.removeProject(projectId, listener);
    }
    if (this.#listeners.isEmpty) {
      this.#clearTimer();
      this.#poll.reset();
      this.#feed.reset();
    }
  }

  /** A project nobody waited on is opened: poll now rather than at the next due poll. */
  #pollSoon(projectId: string): void {
    if (!this.#poll.waitsOn(projectId)) {
      this.#poll.pollNow();
      this.#clearTimer();
    }
    this.#schedule(0);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

export function createEventHub(options: EventHubOptions): EventHub {
  return new EventHub(options);
}
