/**
 * Server-Sent Events for the UI.
 *
 * `/api/stream` (projects page): a `snapshot` on connect with the counts per status and the
 * change-feed version (no rows: the page reads them with `GET /api/projects`), then a `project`
 * message whenever a project changes (its SSE id is the change-feed version the view is as of),
 * `removed`, `counts` and `queue` messages, and a `ping` every `pingIntervalMs`. These are state,
 * not a log: a page that reloads its rows after a reconnect misses nothing.
 *
 * `/api/projects/:id/stream` (project page): a `snapshot` (project, sessions, the last events),
 * then every event of the project's stream with the stream id as the SSE `id`. A reconnecting
 * browser sends `Last-Event-ID`; we replay every entry after it from Redis before switching to the
 * live feed. To leave no gap between the replay and the feed, we subscribe to the hub first,
 * buffer what it delivers, replay, then drain the buffer skipping ids we already sent.
 */
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type * as Browser from '../../public/js/api-types.js';
import type { DashboardControl, EventEntry } from '../control.js';
import type { EventHub, HubMessage } from './event-hub.js';
import { STREAM_ID_PATTERN } from '@baton/projects/schema';
import { compareStreamIds, projectView } from './views.js';

export interface SseOptions {
  control: DashboardControl;
  hub: EventHub;
  /** Interval of `ping` messages. */
  pingIntervalMs: number;
  /** Messages queued for one slow client before we drop it (it reconnects and resumes). */
  maxQueuedMessages: number;
  /** Events in a fresh project snapshot. */
  snapshotEvents: number;
  /** Told when a client connects (+1) and leaves (-1), for the SSE clients gauge. */
  onClient?: (change: 1 | -1, stream: 'projects' | 'project') => void;
}

interface Outgoing {
  event: string;
  data: unknown;
  id?: string | undefined;
}

/**
 * Serialises writes to one client and bounds its queue. Returns a promise that settles when the
 * client goes away or the queue overflows (the connection is then closed).
 */
function createClientWriter(stream: SSEStreamingApi, maxQueued: number) {
  const queue: Outgoing[] = [];
  let writing = false;
  let closedResolve: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    closedResolve = resolve;
  });
  let done = false;

  function finish(): void {
    if (done) return;
    done = true;
    queue.length = 0;
    closedResolve();
  }

  async function drain(): Promise<void> {
    if (writing) return;
    writing = true;
    try {
      while (!done && queue.length > 0) {
        const message = queue.shift() as Outgoing;
        await stream.writeSSE({
          event: message.event,
          data: JSON.stringify(message.data),
          // eslint-disable-next-line no-restricted-syntax -- Hono's SSEMessage.id refuses undefined
          ...(message.id === undefined ? {} : { id: message.id }),
        });
      }
    } catch {
      finish();
    } finally {
      writing = false;
    }
  }

  stream.onAbort(finish);
  return {
    closed,
    send(message: Outgoing): void {
      if (done) return;
      if (queue.length >= maxQueued) {
        // Too slow to keep up: drop it; EventSource reconnects with Last-Event-ID.
        finish();
        stream.abort();
        return;
      }
      queue.push(message);
      void drain();
    },
    get done(): boolean {
      return done;
    },
    finish,
  };
}

function startPing(send: (message: Outgoing) => void, intervalMs: number): () => void {
  const timer = setInterval(() => send({ event: 'ping', data: { at: Date.now() } }), intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}

export function projectsStream(context: Context, options: SseOptions): Response {
  return streamSSE(context, async (stream) => {
    options.onClient?.(1, 'projects');
    const writer = createClientWriter(stream, options.maxQueuedMessages);
    const pending: HubMessage[] = [];
    let ready = false;
    const forward = (message: HubMessage) => {
      if (message.type === 'project')
        writer.send({ event: 'project', data: message.project, id: String(message.version) });
      else if (message.type === 'removed')
        writer.send({
          event: 'removed',
          data: { id: message.projectId },
          id: String(message.version),
        });
      else if (message.type === 'queue') writer.send({ event: 'queue', data: message.counts });
      else if (message.type === 'counts')
        writer.send({
          event: 'counts',
          data: { counts: message.counts, total: message.total } satisfies Browser.FleetCounts,
          id: String(message.version),
        });
    };
    const unsubscribe = options.hub.subscribe((message) => {
      if (message.type === 'event') return;
      if (!ready) pending.push(message);
      else forward(message);
    });
    const stopPing = startPing(writer.send, options.pingIntervalMs);
    try {
      const [snapshot, queue] = await Promise.all([
        options.hub.snapshot(),
        options.control.queueCounts().catch(() => null),
      ]);
      writer.send({
        event: 'snapshot',
        data: { ...snapshot, queue, at: Date.now() } satisfies Browser.ProjectsSnapshot,
        id: String(snapshot.version),
      });
      ready = true;
      for (const message of pending.splice(0)) forward(message);
      await writer.closed;
    } finally {
      stopPing();
      unsubscribe();
      writer.finish();
      options.onClient?.(-1, 'projects');
    }
  });
}

export function projectStream(context: Context, projectId: string, options: SseOptions): Response {
  const header = context.req.header('last-event-id');
  const resumeFrom =
    header !== undefined && STREAM_ID_PATTERN.test(header.trim()) ? header.trim() : undefined;
  return streamSSE(context, async (stream) => {
    options.onClient?.(1, 'project');
    const writer = createClientWriter(stream, options.maxQueuedMessages);
    let lastSent: string | undefined = resumeFrom;
    let buffering = true;
    const buffered: HubMessage[] = [];

    function sendEntry(entry: EventEntry): void {
      if (lastSent !== undefined && compareStreamIds(entry.id, lastSent) <= 0) return;
      lastSent = entry.id;
      writer.send({ event: 'event', id: entry.id, data: entry });
    }

    function handle(message: HubMessage): void {
      if (message.type === 'event') sendEntry(message.entry);
      else if (message.type === 'project') writer.send({ event: 'project', data: message.project });
      else if (message.type === 'removed')
        writer.send({ event: 'removed', data: { id: message.projectId } });
    }

    const unsubscribe = options.hub.subscribeProject(projectId, (message) => {
      if (buffering) buffered.push(message);
      else handle(message);
    });
    const stopPing = startPing(writer.send, options.pingIntervalMs);
    try {
      // Our snapshot and replay are read after the hub's cursor: together they leave no gap.
      await options.hub.following(projectId);
      // The three reads go out together (one round trip on the socket, not three).
      const [project, window, recent] = await Promise.all([
        options.control.getProject(projectId),
        // The newest window; the page asks GET /api/projects/:id/sessions?before= for older ones.
        options.control.pageSessions(projectId, { limit: 50 }),
        resumeFrom === undefined
          ? options.hub.tail(projectId, options.snapshotEvents)
          : Promise.resolve([]),
      ]);
      if (project === null) {
        writer.send({ event: 'removed', data: { id: projectId } });
        return;
      }
      const sessions = window.sessions;
      const sessionsBefore = window.startIndex > 0 ? window.startIndex : null;
      const view = projectView(project, options.hub.activity(projectId));
      if (resumeFrom === undefined) {
        const last = recent[recent.length - 1]?.id;
        writer.send({
          event: 'snapshot',
          data: {
            project: view,
            sessions,
            sessionsBefore,
            events: recent,
            lastEventId: last ?? null,
          } satisfies Browser.ProjectSnapshot,
          id: last,
        });
        lastSent = last ?? '0-0';
      } else {
        writer.send({
          event: 'snapshot',
          data: {
            project: view,
            sessions,
            sessionsBefore,
            events: [],
            resumedFrom: resumeFrom,
          } satisfies Browser.ProjectSnapshot,
        });
      }
      // Replay everything after what the client has, in pages, until caught up.
      for (;;) {
        const page = await options.control.readEvents(projectId, {
          fromId: lastSent ?? '0-0',
          count: 500,
        });
        for (const entry of page) sendEntry(entry);
        if (page.length < 500 || writer.done) break;
      }
      buffering = false;
      for (const message of buffered.splice(0)) handle(message);
      await writer.closed;
    } finally {
      stopPing();
      unsubscribe();
      writer.finish();
      options.onClient?.(-1, 'project');
    }
  });
}
