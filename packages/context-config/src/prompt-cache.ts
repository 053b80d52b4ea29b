import type {
  BetaCacheControlEphemeral,
  BetaContentBlockParam,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolUnion,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { type PriceTable, priceForModel } from './prices.js';

/*
 * Prompt-cache rules as the Messages API documents them
 * (https://platform.claude.com/docs/en/build-with-claude/prompt-caching), in one place: the
 * session places breakpoints with them, the simulator bills with them, the docs cite them.
 */

/** A cache entry's lifetime: 5 minutes (default, 1.25x input) or 1 hour (2x input). */
export type CacheTtl = NonNullable<BetaCacheControlEphemeral['ttl']>;

/** The API refuses a request with more `cache_control` blocks than this. */
export const MAX_CACHE_BREAKPOINTS = 4;

/**
 * How many blocks before a breakpoint the API checks for an earlier cache entry ("about 20").
 * A turn that appends more blocks than this after the previous breakpoint misses unless another
 * breakpoint sits closer; `withCacheBreakpoints` keeps one on the previous request's end.
 */
export const CACHE_LOOKBACK_BLOCKS = 20;

/** Lifetime of an entry after its last write or read, in milliseconds. */
export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = {
  '5m': 5 * 60_000,
  '1h': 60 * 60_000,
};

/**
 * Minimum cacheable prefix length by model id (longest matching prefix wins, `default` when
 * nothing matches). Shorter prefixes are silently not cached. From the published table; `sim`
 * (the simulator's model) uses 512, the smallest published minimum, so that Baton's stable
 * prefix is cacheable there: on the real API it also counts the built-in tools' own definition
 * tokens (the bash tool alone adds 245), which the simulator's estimate does not.
 */
export const MIN_CACHEABLE_TOKENS: Readonly<Record<string, number>> = {
  'claude-opus-4-5': 4096,
  'claude-opus-4-6': 4096,
  'claude-opus-4-7': 2048,
  'claude-opus-4-8': 1024,
  'claude-opus-4-1': 1024,
  // Opus 4 and Sonnet 4 ids carry only a date (claude-opus-4-20250514).
  'claude-opus-4-2025': 1024,
  'claude-sonnet-4-6': 2048,
  'claude-sonnet-4-5': 1024,
  'claude-sonnet-4-2025': 1024,
  'claude-3-7-sonnet': 1024,
  'claude-haiku-4-5': 4096,
  'claude-3-5-haiku': 2048,
  'claude-3-haiku': 2048,
  sim: 512,
  default: 1024,
};

/** The minimum cacheable prefix length of `model`, in tokens. */
export function minCacheableTokens(model: string): number {
  const exact = MIN_CACHEABLE_TOKENS[model];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const key of Object.keys(MIN_CACHEABLE_TOKENS)) {
    if (
      key !== 'default' &&
      model.startsWith(key) &&
      (best === undefined || key.length > best.length)
    )
      best = key;
  }
  return MIN_CACHEABLE_TOKENS[best ?? 'default'] ?? 1024;
}

/** How a session caches: on with a TTL for the stable prefix, or off (`null`). */
export interface PromptCachePolicy {
  /**
   * TTL of the stable prefix (tools + system). `'1h'` pays 2x input once per hour instead of
   * 1.25x every five idle minutes: worth it when a project's sessions follow each other with
   * gaps over five minutes. The conversation breakpoints always use `'5m'`.
   */
  prefixTtl: CacheTtl;
}

/** The parts of a request that breakpoints go on. */
export interface CacheableRequest {
  tools?: BetaToolUnion[] | undefined;
  system?: string | BetaTextBlockParam[] | undefined;
  messages: BetaMessageParam[];
}

/** Where one breakpoint went and why. */
export interface PlacedBreakpoint {
  /** `stable-prefix`: end of tools + system; `conversation-end`: the last block, moved every turn; `previous-end`: the last block the previous request cached. */
  role: 'stable-prefix' | 'conversation-end' | 'previous-end';
  ttl: CacheTtl;
  /** `tools` / `system`, or the index of the message. */
  at: 'tools' | 'system' | number;
}

/** A request with its breakpoints placed, and where they went. */
export type WithBreakpoints<Request extends CacheableRequest> = Request & {
  breakpoints: PlacedBreakpoint[];
};

function mark(ttl: CacheTtl): BetaCacheControlEphemeral {
  return ttl === '5m' ? { type: 'ephemeral' } : { type: 'ephemeral', ttl };
}

/** Thinking blocks cannot carry `cache_control`; empty text blocks neither. */
function canMark(block: BetaContentBlockParam): boolean {
  if (block.type === 'thinking' || block.type === 'redacted_thinking') return false;
  return !(block.type === 'text' && block.text === '');
}

/** A copy of `message` with its last markable block marked, or undefined when none can be. */
function markMessage(message: BetaMessageParam, ttl: CacheTtl): BetaMessageParam | undefined {
  if (typeof message.content === 'string') {
    if (message.content === '') return undefined;
    return {
      ...message,
      content: [{ type: 'text', text: message.content, cache_control: mark(ttl) }],
    };
  }
  if (!Array.isArray(message.content) || message.role === 'system') return undefined;
  const content = [...(message.content as BetaContentBlockParam[])];
  for (let index = content.length - 1; index >= 0; index -= 1) {
    const block = content[index] as BetaContentBlockParam;
    if (!canMark(block)) continue;
    content[index] = { ...block, cache_control: mark(ttl) } as BetaContentBlockParam;
    return { ...message, content } as BetaMessageParam;
  }
  return undefined;
}

/**
 * Places the session's cache breakpoints on a request (never mutating it), at most three of the
 * API's four:
 * 1. `stable-prefix`: the last system block (or the last tool when there is no system), with the
 *    policy's TTL: tools and system are the same for every session, so one session's write is
 *    the next one's read.
 * 2. `conversation-end`: the last markable block of the last message, 5 minutes, moved every
 *    turn: each request reads what the previous one wrote and writes only its new blocks (the
 *    documented incremental-conversation pattern).
 * 3. `previous-end`: the last block of the user message before the last assistant turn (where
 *    the previous request's `conversation-end` was), so a turn that appended more than
 *    `CACHE_LOOKBACK_BLOCKS` blocks still reads the previous prefix.
 * `policy` null or undefined returns the request unchanged (with no breakpoints).
 */
export function withCacheBreakpoints<Request extends CacheableRequest>(
  request: Request,
  policy: PromptCachePolicy | null | undefined,
): WithBreakpoints<Request> {
  if (policy === null || policy === undefined) return { ...request, breakpoints: [] };
  const breakpoints: PlacedBreakpoint[] = [];
  const result: WithBreakpoints<Request> = { ...request, breakpoints };

  const system = request.system;
  if (typeof system === 'string' && system !== '') {
    result.system = [{ type: 'text', text: system, cache_control: mark(policy.prefixTtl) }];
    breakpoints.push({ role: 'stable-prefix', ttl: policy.prefixTtl, at: 'system' });
  } else if (Array.isArray(system) && system.length > 0) {
    const blocks = [...system];
    const last = blocks[blocks.length - 1] as BetaTextBlockParam;
    blocks[blocks.length - 1] = { ...last, cache_control: mark(policy.prefixTtl) };
    result.system = blocks;
    breakpoints.push({ role: 'stable-prefix', ttl: policy.prefixTtl, at: 'system' });
  } else if (request.tools !== undefined && request.tools.length > 0) {
    const tools = [...request.tools];
    const last = tools[tools.length - 1] as BetaToolUnion;
    tools[tools.length - 1] = { ...last, cache_control: mark(policy.prefixTtl) } as BetaToolUnion;
    result.tools = tools;
    breakpoints.push({ role: 'stable-prefix', ttl: policy.prefixTtl, at: 'tools' });
  }

  const messages = [...request.messages];
  const lastIndex = messages.length - 1;
  const last = messages[lastIndex];
  if (last !== undefined) {
    const marked = markMessage(last, '5m');
    if (marked !== undefined) {
      messages[lastIndex] = marked;
      breakpoints.push({ role: 'conversation-end', ttl: '5m', at: lastIndex });
    }
  }
  const previousIndex = previousEnd(messages);
  if (previousIndex !== undefined) {
    const marked = markMessage(messages[previousIndex] as BetaMessageParam, '5m');
    if (marked !== undefined) {
      messages[previousIndex] = marked;
      breakpoints.push({ role: 'previous-end', ttl: '5m', at: previousIndex });
    }
  }
  result.messages = messages;
  // The API reads breakpoints in prompt order; keep the list in that order too.
  breakpoints.sort((a, b) => order(a.at) - order(b.at));
  return result;
}

function order(at: PlacedBreakpoint['at']): number {
  return at === 'tools' ? -2 : at === 'system' ? -1 : at;
}

/** Index of the user message the previous request ended with (before the last assistant turn). */
function previousEnd(messages: readonly BetaMessageParam[]): number | undefined {
  let sawAssistant = false;
  for (let index = messages.length - 2; index >= 0; index -= 1) {
    const role = messages[index]?.role;
    if (role === 'assistant') sawAssistant = true;
    else if (role === 'user' && sawAssistant) return index;
  }
  return undefined;
}

/** What a context-editing clear costs in cache terms, and when it has paid for itself. */
export interface ClearingCacheCost {
  /** Tokens after the first cleared block that are written again instead of read. */
  rewrittenInputTokens: number;
  /** The extra cost of that rewrite: `rewritten x (5-minute write - read)` per token. */
  invalidationCostUsd: number;
  /** What each later request saves by not reading the cleared tokens: `cleared x read` per token. */
  savedPerRequestUsd: number;
  /** Requests after the clear until it has paid for itself (`Infinity` when it frees nothing). */
  breakEvenRequests: number;
}

/**
 * The arithmetic that decides whether a clear pays (documented in docs/context-management.md):
 * with caching, a kept token costs a cache read (0.1x input) per request, so a clear that frees
 * `cleared` tokens saves `cleared x read` per later request; it makes the API write the
 * `rewritten` tokens after the first cleared block again (1.25x) where it would have read them
 * (0.1x). It pays after `rewritten x (write - read) / (cleared x read)` requests: with the list
 * ratios, `11.5 x rewritten / cleared`.
 */
export function clearingCacheCost(options: {
  model: string;
  prices?: PriceTable | undefined;
  rewrittenInputTokens: number;
  clearedInputTokens: number;
}): ClearingCacheCost {
  const price = priceForModel(options.model, options.prices);
  const perToken = 1 / 1_000_000;
  const rewritten = Math.max(0, options.rewrittenInputTokens);
  const invalidationCostUsd =
    rewritten * (price.cacheWritePerMTok - price.cacheReadPerMTok) * perToken;
  const savedPerRequestUsd =
    Math.max(0, options.clearedInputTokens) * price.cacheReadPerMTok * perToken;
  return {
    rewrittenInputTokens: rewritten,
    invalidationCostUsd,
    savedPerRequestUsd,
    breakEvenRequests:
      savedPerRequestUsd > 0 ? invalidationCostUsd / savedPerRequestUsd : Number.POSITIVE_INFINITY,
  };
}
