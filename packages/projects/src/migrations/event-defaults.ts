/**
 * The run-once upgrade of the project events the first event migration (`event-fields.ts`) left
 * to read-time defaults (Redis migration `2026-12-04-event-defaults`, `BATON_HOME` migration
 * `2026-12-04-local-event-defaults`): tool calls, memory changes, API retries, checkpoints, the
 * other session events and the worker's events, a session start's `interrupted` and a turn's
 * applied edits' `cleared_input_tokens`. Each missing field gets exactly what the decoder read
 * its absence as (a count 0, a flag false, a list empty, a message '', an id or reason null), so
 * nothing a reader shows changes. A turn's `responseId` and a tool call's `toolUseId` stay
 * optional: no migration can know them. Entry ids are kept (`event-rewrite.ts`).
 */
import {
  isObject,
  rewriteFileEvents,
  rewriteRedisEvents,
  withDefaults,
  type StoredEvent,
} from './event-rewrite.js';
import type { MigrationContext } from './redis-migrations.js';

/** Each event type's top-level fields and what their absence read as. */
const UPGRADED_FIELDS: Readonly<Record<string, StoredEvent>> = {
  'session-start': { interrupted: false },
  'tool-call': { summary: '', isError: false, durationMs: 0 },
  'mcp-server': { tools: [] },
  'model-fallback': { message: '' },
  'context-full': { promptTokens: null, contextWindow: null },
  'empty-reply': { nudged: false },
  'api-retry': { delayMs: 0, message: '' },
  checkpoint: { skipped: [] },
  'guidance-delivered': { inFirstMessage: false },
  'project-status': { reason: null },
  'session-queued': { delayMs: 0 },
  'session-claimed': { interrupted: false },
  'project-paused': { runningSessionId: null, removedJobId: null },
  'guidance-sent': { runningSessionId: null },
  'workspace-prepared': { remoteHead: null, recovered: false },
  'memory-snapshot': { withheld: [] },
};

/** Each item of `value` (when it is a list) with the fields of `defaults` it lacks. */
function eachWithDefaults(value: unknown, defaults: StoredEvent): unknown {
  return Array.isArray(value) ? value.map((item) => withDefaults(item, defaults)) : value;
}

/** `event` with the fields nested in it filled (applied edits, a memory change, a checkpoint's). */
function withNestedFields(event: StoredEvent): StoredEvent {
  switch (event.type) {
    case 'turn':
      return {
        ...event,
        appliedEdits: eachWithDefaults(event.appliedEdits, { cleared_input_tokens: 0 }),
      };
    case 'memory-change':
      return { ...event, change: withDefaults(event.change, { bytes: 0, at: 0 }) };
    case 'checkpoint': {
      const filled: StoredEvent = { ...event };
      if (filled.tooLarge !== undefined) {
        filled.tooLarge = eachWithDefaults(filled.tooLarge, { bytes: 0 });
      }
      if (isObject(filled.replacedStale)) {
        filled.replacedStale = withDefaults(filled.replacedStale, { fence: 0, commits: 0 });
      }
      return filled;
    }
    default:
      return event;
  }
}

/** `event` in the current shape (null: a type this migration does not touch). */
function upgradeDefaults(event: StoredEvent): StoredEvent | null {
  const type = String(event.type);
  const fields = Object.hasOwn(UPGRADED_FIELDS, type) ? UPGRADED_FIELDS[type] : undefined;
  if (fields === undefined && !['turn', 'memory-change'].includes(type)) return null;
  return withNestedFields(
    fields === undefined ? event : (withDefaults(event, fields) as StoredEvent),
  );
}

/** The Redis migration: each project's event stream holding an event with such a field missing. */
export function completeRedisEventDefaults(context: MigrationContext, ids: readonly string[]) {
  return rewriteRedisEvents(context, ids, () => upgradeDefaults);
}

/** The `BATON_HOME` migration: each project's `events.jsonl` holding such an event. */
export function completeFileEventDefaults(home: string): Promise<void> {
  return rewriteFileEvents(home, () => upgradeDefaults);
}
