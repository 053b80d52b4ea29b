import { createHash } from 'node:crypto';
import type {
  BetaCacheControlEphemeral,
  BetaMessageParam,
  BetaTextBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  CACHE_LOOKBACK_BLOCKS,
  CACHE_TTL_MS,
  type CacheTtl,
  MAX_CACHE_BREAKPOINTS,
  estimateTokens,
  minCacheableTokens,
} from '@baton/context-config';
import { invalidRequest } from './api-errors.js';

/*
 * Prompt caching billed as the Messages API documents it (docs/model-sim.md cites the rules):
 * the prompt is a sequence of blocks in the order tools -> system -> messages; a block marked
 * with `cache_control` caches the prefix up to and including it; at most four marks; each mark
 * looks back about 20 blocks for the longest prefix already cached; a prefix shorter than the
 * model's minimum is not cached; entries live 5 minutes or 1 hour from their last write or read;
 * any change to a block (a tool, the system prompt, an earlier message, a context-editing clear)
 * changes every later prefix, so nothing after it is found.
 */

/** Where a request marked a breakpoint, in terms the edited history still has. */
export interface BreakpointMark {
  ttl: CacheTtl;
  /** `tools`/`system` with the block's index there, or a message index with the index among that message's non-thinking blocks. */
  at:
    | { part: 'tools'; index: number }
    | { part: 'system'; index: number }
    | { part: 'message'; message: number; index: number };
}

/** A request with its `cache_control` marks taken off, and where they were. */
export interface UnmarkedRequest {
  tools: unknown[] | undefined;
  system: string | BetaTextBlockParam[] | undefined;
  messages: BetaMessageParam[];
  marks: BreakpointMark[];
}

/** What the cache did for one request, in the API's usage terms. */
export interface CacheBill {
  readInputTokens: number;
  write5mInputTokens: number;
  write1hInputTokens: number;
  /** Input tokens neither read nor written. */
  uncachedInputTokens: number;
}

function isThinking(block: unknown): boolean {
  const type = (block as { type?: unknown } | null)?.type;
  return type === 'thinking' || type === 'redacted_thinking';
}

function ttlOf(control: unknown, where: string): CacheTtl {
  const value = control as Partial<BetaCacheControlEphemeral> | null;
  if (value === null || typeof value !== 'object' || value.type !== 'ephemeral') {
    throw invalidRequest(`${where}.cache_control.type: Input should be 'ephemeral'.`);
  }
  if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h') {
    throw invalidRequest(`${where}.cache_control.ttl: Input should be '5m' or '1h'.`);
  }
  return value.ttl ?? '5m';
}

function strip<T>(block: T): T {
  if (block === null || typeof block !== 'object' || !('cache_control' in block)) return block;
  const { cache_control: _mark, ...rest } = block as Record<string, unknown>;
  return rest as T;
}

/**
 * Takes the `cache_control` marks off a request and checks them as the API does: at most four
 * (a top-level `cache_control` counts as one, on the last block), never on thinking blocks, and
 * a 1-hour mark never after a 5-minute one.
 */
export function unmarkRequest(body: {
  tools: unknown;
  system: unknown;
  messages: BetaMessageParam[];
  topLevel: unknown;
}): UnmarkedRequest {
  const marks: BreakpointMark[] = [];
  let tools: unknown[] | undefined;
  if (Array.isArray(body.tools)) {
    tools = body.tools.map((tool, index) => {
      const control = (tool as { cache_control?: unknown } | null)?.cache_control;
      if (control !== undefined && control !== null) {
        marks.push({ ttl: ttlOf(control, `tools.${index}`), at: { part: 'tools', index } });
      }
      return strip(tool);
    });
  }
  let system: string | BetaTextBlockParam[] | undefined;
  if (typeof body.system === 'string') system = body.system;
  else if (Array.isArray(body.system)) {
    system = (body.system as BetaTextBlockParam[]).map((block, index) => {
      if (block.cache_control !== undefined && block.cache_control !== null) {
        marks.push({
          ttl: ttlOf(block.cache_control, `system.${index}`),
          at: { part: 'system', index },
        });
      }
      return strip(block);
    });
  }
  const messages = body.messages.map((message, messageIndex) => {
    if (!Array.isArray(message.content)) return message;
    let kept = 0;
    const content = (message.content as unknown[]).map((block, blockIndex) => {
      const control = (block as { cache_control?: unknown } | null)?.cache_control;
      const thinking = isThinking(block);
      if (control !== undefined && control !== null) {
        if (thinking) {
          throw invalidRequest(
            `messages.${messageIndex}.content.${blockIndex}.cache_control: thinking blocks cannot be cached directly.`,
          );
        }
        marks.push({
          ttl: ttlOf(control, `messages.${messageIndex}.content.${blockIndex}`),
          at: { part: 'message', message: messageIndex, index: kept },
        });
      }
      if (!thinking) kept += 1;
      return strip(block);
    });
    return { ...message, content } as BetaMessageParam;
  });
  if (body.topLevel !== undefined && body.topLevel !== null) {
    const ttl = ttlOf(body.topLevel, 'body');
    const last = lastCacheable(tools, system, messages);
    if (last !== undefined) marks.push({ ttl, at: last });
  }
  if (marks.length > MAX_CACHE_BREAKPOINTS) {
    throw invalidRequest(
      `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks.length}.`,
    );
  }
  let sawFiveMinutes = false;
  for (const mark of marks) {
    if (mark.ttl === '5m') sawFiveMinutes = true;
    else if (sawFiveMinutes) {
      throw invalidRequest(
        "A cache_control block with ttl='1h' must not come after one with ttl='5m' (longer TTLs go first).",
      );
    }
  }
  return { tools, system, messages, marks };
}

/** Automatic caching: the last block that can carry a mark. */
function lastCacheable(
  tools: unknown[] | undefined,
  system: string | BetaTextBlockParam[] | undefined,
  messages: BetaMessageParam[],
): BreakpointMark['at'] | undefined {
  for (let message = messages.length - 1; message >= 0; message -= 1) {
    const content = messages[message]?.content;
    if (typeof content === 'string') return { part: 'message', message, index: 0 };
    if (!Array.isArray(content)) continue;
    const kept = (content as unknown[]).filter((block) => !isThinking(block)).length;
    if (kept > 0) return { part: 'message', message, index: kept - 1 };
  }
  if (Array.isArray(system) && system.length > 0)
    return { part: 'system', index: system.length - 1 };
  if (typeof system === 'string') return { part: 'system', index: 0 };
  if (tools !== undefined && tools.length > 0) return { part: 'tools', index: tools.length - 1 };
  return undefined;
}

interface Entry {
  ttl: CacheTtl;
  expiresAt: number;
}

/** One block of the prompt: the hash of the prefix ending with it and the tokens up to it. */
interface PrefixPoint {
  hash: string;
  tokens: number;
}

export interface PromptCacheOptions {
  /** Milliseconds now; tests move it to expire entries. */
  now: () => number;
  /** Entries kept at most (expired ones go first, then the oldest). */
  maxEntries: number;
  /** Overrides the model's minimum cacheable length (see `minCacheableTokens`). */
  minCacheableTokens?: number | undefined;
}

/**
 * The simulator's prompt cache, shared by every request it serves (like an organisation's cache
 * on the API, so one session reads what another wrote).
 */
export class PromptCache {
  readonly #entries = new Map<string, Entry>();
  readonly #options: PromptCacheOptions;

  constructor(options: PromptCacheOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Bills one request: `messages` is the history after context editing (what the model sees),
   * so a cleared block changes every prefix from it on.
   */
  bill(request: {
    model: string;
    tools: unknown[] | undefined;
    system: string | BetaTextBlockParam[] | undefined;
    messages: BetaMessageParam[];
    marks: readonly BreakpointMark[];
  }): CacheBill {
    const { points, positions } = prefixPoints(request);
    const total = points.length === 0 ? 0 : (points[points.length - 1] as PrefixPoint).tokens;
    const breakpoints = request.marks
      .map((mark) => ({ ttl: mark.ttl, position: positions(mark.at) }))
      .filter((point): point is { ttl: CacheTtl; position: number } => point.position !== undefined)
      .sort((a, b) => a.position - b.position);
    if (breakpoints.length === 0) {
      return {
        readInputTokens: 0,
        write5mInputTokens: 0,
        write1hInputTokens: 0,
        uncachedInputTokens: total,
      };
    }
    const now = this.#options.now();

    // Read: each breakpoint finds the longest live prefix within its lookback window; a hit
    // refreshes that entry's lifetime.
    let readPosition = -1;
    for (const breakpoint of breakpoints) {
      const lowest = Math.max(0, breakpoint.position - CACHE_LOOKBACK_BLOCKS);
      for (let position = breakpoint.position; position >= lowest; position -= 1) {
        const hash = (points[position] as PrefixPoint).hash;
        const entry = this.#live(hash, now);
        if (entry === undefined) continue;
        entry.expiresAt = now + CACHE_TTL_MS[entry.ttl];
        readPosition = Math.max(readPosition, position);
        break;
      }
    }
    const read = readPosition < 0 ? 0 : (points[readPosition] as PrefixPoint).tokens;

    // Write: every breakpoint past the read prefix that is long enough caches its prefix; the
    // tokens between the previous cached point and it are billed at its TTL.
    const minimum = this.#options.minCacheableTokens ?? minCacheableTokens(request.model);
    let written = read;
    let write5m = 0;
    let write1h = 0;
    for (const breakpoint of breakpoints) {
      if (breakpoint.position <= readPosition) continue;
      const point = points[breakpoint.position] as PrefixPoint;
      if (point.tokens < minimum) continue;
      const tokens = point.tokens - written;
      if (breakpoint.ttl === '1h') write1h += tokens;
      else write5m += tokens;
      written = point.tokens;
      this.#store(point.hash, breakpoint.ttl, now);
    }
    return {
      readInputTokens: read,
      write5mInputTokens: write5m,
      write1hInputTokens: write1h,
      uncachedInputTokens: total - written,
    };
  }

  #live(hash: string, now: number): Entry | undefined {
    const entry = this.#entries.get(hash);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(hash);
      return undefined;
    }
    return entry;
  }

  #store(hash: string, ttl: CacheTtl, now: number): void {
    const existing = this.#entries.get(hash);
    // A write never shortens a longer-lived entry of the same prefix.
    const keepTtl =
      existing !== undefined && existing.ttl === '1h' && existing.expiresAt > now ? '1h' : ttl;
    this.#entries.delete(hash);
    this.#entries.set(hash, { ttl: keepTtl, expiresAt: now + CACHE_TTL_MS[keepTtl] });
    if (this.#entries.size <= this.#options.maxEntries) return;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(key);
    }
    while (this.#entries.size > this.#options.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }
}

/**
 * The prompt as blocks with their running hash and token count, and a lookup from a mark to its
 * block's position. Tokens per block are `estimateTokens`, summed exactly as
 * `estimateInputTokens` sums them, so read + written + uncached is the request's input.
 */
function prefixPoints(request: {
  model: string;
  tools: unknown[] | undefined;
  system: string | BetaTextBlockParam[] | undefined;
  messages: BetaMessageParam[];
}): { points: PrefixPoint[]; positions: (at: BreakpointMark['at']) => number | undefined } {
  const points: PrefixPoint[] = [];
  let hash = createHash('sha256').update(`model:${request.model}`).digest('hex');
  let tokens = 0;
  const push = (label: string, block: unknown, counted: unknown) => {
    hash = createHash('sha256')
      .update(hash)
      .update(label)
      .update(JSON.stringify(block) ?? '')
      .digest('hex');
    tokens += estimateTokens(counted);
    points.push({ hash, tokens });
  };
  const toolStart = 0;
  for (const tool of request.tools ?? []) push('tool', tool, tool);
  const systemStart = points.length;
  if (typeof request.system === 'string') push('system', request.system, request.system);
  else for (const block of request.system ?? []) push('system', block, block);
  const messageKept: number[][] = [];
  request.messages.forEach((message, messageIndex) => {
    const kept: number[] = [];
    const label = `message:${messageIndex}:${message.role}`;
    if (typeof message.content === 'string') {
      kept.push(points.length);
      push(label, message.content, message.content);
    } else {
      for (const block of message.content ?? []) {
        if (!isThinking(block)) kept.push(points.length);
        push(label, block, block);
      }
    }
    messageKept.push(kept);
  });
  return {
    points,
    positions(at) {
      if (at.part === 'tools')
        return at.index < (request.tools?.length ?? 0) ? toolStart + at.index : undefined;
      if (at.part === 'system') {
        const count = typeof request.system === 'string' ? 1 : (request.system?.length ?? 0);
        return at.index < count ? systemStart + at.index : undefined;
      }
      return messageKept[at.message]?.[at.index];
    },
  };
}
