// The project page's event list: the stream's snapshot (newest 200) and live events, newest
// first, bounded while live; older windows on demand (GET /api/projects/:id/events?before=).
import { getJson, projectPath } from './api.js';
import { h } from './dom.js';
import {
  formatDuration,
  formatHitRate,
  formatNumber,
  formatTime,
  formatTokens,
  usageInput,
} from './format.js';
import { createOlderButton } from './older-button.js';

const MAX_TAIL = 300;
/** Events in the stream's snapshot (the server's `snapshotEvents`). */
const SNAPSHOT_EVENTS = 200;

/** @typedef {import('./api-types.js').ProjectEvent} ProjectEvent */
/** @typedef {import('./api-types.js').EventEntry} EventEntry */

/**
 * One webhook delivery outcome, e.g. `project.completed → http://host: delivered (3 attempts)`.
 * @param {Pick<import('./api-types.js').WebhookDelivery, 'type' | 'target' | 'ok' | 'attempts' | 'status' | 'error'>} delivery
 */
export function describeDelivery(delivery) {
  const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
  const outcome = delivery.ok
    ? `delivered (${attempts})`
    : `failed after ${attempts}: ${delivery.error ?? `HTTP ${delivery.status ?? '?'}`}`;
  return `webhook ${delivery.type} → ${delivery.target}: ${outcome}`;
}

/**
 * One readable line per stream event.
 * @param {ProjectEvent} event
 * @returns {string}
 */
function describeEvent(event) {
  switch (event.type) {
    case 'session-start':
      return `session ${event.sessionNumber} started (${event.kind}${event.interrupted ? ', after an interruption' : ''}) on ${event.model}`;
    case 'turn': {
      const cleared =
        event.clearedInputTokens > 0 ? `, cleared ${formatTokens(event.clearedInputTokens)}` : '';
      const input = usageInput(event.usage);
      const cached = input.read > 0 ? ` (${formatHitRate(input.read, input.total)} cached)` : '';
      return `turn ${event.turn}: ${event.stopReason} · in ${formatTokens(input.total)}${cached} out ${formatTokens(event.usage.outputTokens)}${cleared} · ${formatDuration(event.durationMs)}`;
    }
    case 'model-fallback':
      return `${event.from} stays overloaded: the session continues on ${event.to} from turn ${event.turn}`;
    case 'tool-call':
      return `${event.tool}: ${event.summary}${event.isError ? ' (error)' : ''}${event.limit ? ` · ${event.limit}` : ''}`;
    case 'mcp-server':
      return `MCP server ${event.server} (${event.source}, ${event.transport}): ${event.state}${event.state === 'ready' ? ` · ${event.tools.length} tools` : ''}${event.message ? ` · ${event.message}` : ''}`;
    case 'memory-change': {
      const change = event.change;
      return `memory ${change.command} ${change.path}${change.newPath ? ` → ${change.newPath}` : ''} (${formatNumber(change.bytes)} B)`;
    }
    case 'context-full':
      return `context window full at turn ${event.turn}${event.promptTokens === null ? '' : ` (${formatTokens(event.promptTokens)}${event.contextWindow === null ? '' : ` of ${formatTokens(event.contextWindow)}`} tokens)`}: the next session continues`;
    case 'empty-reply':
      return `empty reply at turn ${event.turn}${event.nudged ? ': asked the model to continue' : ''}`;
    case 'api-retry':
      return `API retry #${event.attempt}${event.status ? ` after HTTP ${event.status}` : ''}, waiting ${formatDuration(event.delayMs)}`;
    case 'session-end': {
      const result = event.result;
      return `session ended: ${result.outcome} (${result.reason}) · ${result.turns} turns · features ${result.featuresAfter.passing}/${result.featuresAfter.total}`;
    }
    case 'project-status':
      return `status ${event.from ?? '–'} → ${event.to}${event.reason ? `: ${event.reason}` : ''}`;
    case 'session-queued':
      return `session ${event.sessionNumber} queued (${event.reason})`;
    case 'session-interrupted':
      return `session ${event.sessionNumber} was interrupted (worker ${event.workerId})`;
    case 'session-claimed':
      return `session ${event.sessionNumber} claimed by worker ${event.workerId}`;
    case 'session-released':
      return `session ${event.sessionNumber} released: ${event.outcome}`;
    case 'webhook-delivery':
      return describeDelivery({ ...event, type: event.webhookType });
    case 'unknown':
      return `unreadable ${event.originalType ?? 'event'}: ${event.problem}`;
    default:
      return event.type;
  }
}

/** @param {ProjectEvent} event */
function eventClass(event) {
  if (
    (event.type === 'tool-call' && event.isError) ||
    event.type === 'api-retry' ||
    event.type === 'context-full' ||
    event.type === 'empty-reply'
  )
    return 'event warn';
  if (event.type === 'unknown') return 'event warn';
  if (event.type === 'session-end' && event.result.outcome === 'failed') return 'event error';
  if (
    event.type === 'session-start' ||
    event.type === 'session-end' ||
    event.type === 'project-status'
  )
    return 'event major';
  return 'event';
}

/**
 * createEventList(projectId) -> { elements, showSnapshot(events), add(entry) }.
 * @param {string} projectId
 */
export function createEventList(projectId) {
  const tail = h('ol', { class: 'tail', dataset: { testid: 'event-tail' }, reversed: true });
  const older = createOlderButton('Older events', 'older-events', async (before) => {
    /** @type {import('./api-types.js').EventsPage} */
    const page = await getJson(`${projectPath(projectId)}/events`, { before, limit: 200 });
    for (const entry of [...page.events].reverse()) add(entry, false);
    return page.before;
  });

  /**
   * @param {EventEntry} entry
   * @param {boolean} [prepend]
   */
  function add(entry, prepend = true) {
    const event = entry.event;
    const item = h(
      'li',
      { class: eventClass(event), dataset: { id: entry.id, type: event.type } },
      h('time', { datetime: new Date(event.at).toISOString() }, formatTime(event.at)),
      h('span', { class: 'event-type' }, event.type),
      h('span', { class: 'event-text' }, describeEvent(event)),
    );
    if (!prepend) {
      tail.append(item);
      return;
    }
    tail.prepend(item);
    // Live events keep the list bounded; older ones the user asked for stay.
    if (tail.children.length > MAX_TAIL) {
      tail.lastElementChild?.remove();
      // The list's items are the `li`s `add` made.
      const oldest = /** @type {HTMLLIElement | null} */ (tail.lastElementChild);
      older.setCursor(oldest?.dataset.id ?? null);
    }
  }

  return {
    elements: [tail, older.element],
    /** @param {EventEntry[]} events */
    showSnapshot(events) {
      if (events.length === 0) return;
      tail.replaceChildren();
      for (const entry of events) add(entry);
      // A full snapshot may have older events behind it.
      older.setCursor(events.length >= SNAPSHOT_EVENTS ? (events[0]?.id ?? null) : null);
    },
    add,
  };
}
