import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { ApiError, invalidRequest } from './api-errors.js';

/**
 * Server-side message threads (beta `message-threads-2026-08-12`), as the SDK's tool runner uses
 * them: a `create` turn sends the full history and the server stores it with the reply under the
 * reply's message id; a `continue` turn sends only the new messages plus `previous_message_id`,
 * and the server takes `system` and `tools` from the thread (a continue that repeats them is
 * refused, as the API does).
 */

interface StoredThread {
  system: unknown;
  tools: unknown;
  /** Full history including the stored reply, as message params. */
  messages: BetaMessageParam[];
}

type ThreadField =
  { type: 'create' } | { type: 'continue'; previous_message_id: string } | undefined;

interface ResolvedThread {
  thread: ThreadField;
  system: unknown;
  tools: unknown;
  messages: unknown[];
}

export interface ThreadStore {
  /** Turns the request's fields into the full history the model sees. */
  resolve(body: Record<string, unknown>): ResolvedThread;
  /** Stores the history plus reply under the reply's id (only for threaded requests). */
  record(resolved: ResolvedThread, replyId: string, reply: BetaMessageParam): void;
  readonly size: number;
}

function parseThreadField(value: unknown): ThreadField {
  if (value === undefined || value === null || value === false) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (record['type'] === 'create') return { type: 'create' };
    if (record['type'] === 'continue') {
      const previous = record['previous_message_id'];
      if (typeof previous !== 'string' || previous.length === 0) {
        throw invalidRequest('thread.previous_message_id: Field required for a continue.');
      }
      return { type: 'continue', previous_message_id: previous };
    }
  }
  throw invalidRequest(
    'thread: Input should be { "type": "create" } or { "type": "continue", "previous_message_id": "msg_..." }.',
  );
}

export function createThreadStore(options: { enabled: boolean; maxThreads: number }): ThreadStore {
  // Map keeps insertion order, so the first key is the oldest thread.
  const threads = new Map<string, StoredThread>();

  return {
    get size() {
      return threads.size;
    },
    resolve(body) {
      const thread = parseThreadField(body['thread']);
      const messages = Array.isArray(body['messages']) ? (body['messages'] as unknown[]) : [];
      if (thread && !options.enabled) {
        throw invalidRequest(
          'thread: this simulator was started with threads disabled. Send the full history every turn instead: pass `thread: false` to the tool runner.',
          { error_code: 'thread_unsupported_request', unsupported: ['thread'] },
        );
      }
      if (thread?.type !== 'continue') {
        return { thread, system: body['system'], tools: body['tools'], messages };
      }
      for (const field of ['system', 'tools'] as const) {
        if (body[field] !== undefined) {
          throw invalidRequest(
            `${field}: a thread keeps the \`system\` and \`tools\` it was created with; a continue must not send them.`,
          );
        }
      }
      const stored = threads.get(thread.previous_message_id);
      if (!stored) {
        throw new ApiError(
          'not_found_error',
          `thread: no thread holds the message ${thread.previous_message_id} (it may have been forgotten). Replay the full history under a new thread.`,
          { details: { error_code: 'thread_not_found' } },
        );
      }
      return {
        thread,
        system: stored.system,
        tools: stored.tools,
        messages: [...stored.messages, ...messages],
      };
    },
    record(resolved, replyId, reply) {
      if (!resolved.thread) return;
      threads.set(replyId, {
        system: resolved.system,
        tools: resolved.tools,
        messages: [...(resolved.messages as BetaMessageParam[]), reply],
      });
      while (threads.size > options.maxThreads) {
        const oldest = threads.keys().next().value;
        if (oldest === undefined) break;
        threads.delete(oldest);
      }
    },
  };
}
