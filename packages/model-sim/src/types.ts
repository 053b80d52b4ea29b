import type {
  BetaMessageParam,
  BetaStopReason,
  MessageCreateParamsBase,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';

/**
 * Faults the simulator injects. Request numbers are 1-based and count `POST /v1/messages`
 * requests only (retries by the SDK are new requests and get new numbers).
 */
export interface SimFaults {
  /** Delay added before every `/v1/messages` response starts, in ms. Default 0. */
  latencyMs?: number;
  /** Pause between SSE events of a stream, in ms (a slow model; lets tests abort mid-stream). Default 0. */
  eventDelayMs?: number;
  /** Requests answered `429 rate_limit_error` with a `retry-after` header. */
  rateLimitOn?: number[];
  /** Requests answered `529 overloaded_error`. */
  overloadedOn?: number[];
  /** Requests answered `500 api_error`. */
  serverErrorOn?: number[];
  /**
   * Every request for one of these model ids is answered `529 overloaded_error`, however often it
   * is retried, while requests for other models are answered normally: a model that stays
   * overloaded, for testing a fallback model.
   */
  overloadedModels?: string[];
  /** Every `/v1/messages` request fails with this status (401/403: a bad key, a key without access). */
  alwaysFail?: 500 | 529 | 429 | 401 | 403;
  /** Requests answered `401 authentication_error` (a key the API does not accept). */
  unauthorizedOn?: number[];
  /** Requests answered `403 permission_error` (a key without access to the model). */
  forbiddenOn?: number[];
  /**
   * Model ids the API does not know: every request naming one is answered
   * `404 not_found_error` with the message `model: <id>`, as the API does.
   */
  unknownModels?: string[];
  /** Requests answered with an empty reply: `content: []`, `end_turn`, 2 output tokens. */
  emptyReplyOn?: number[];
  /**
   * The error type of the `event: error` that `streamErrorOn` sends after the 200
   * (`overloaded_error`, `api_error`, `rate_limit_error`, ...). Default `overloaded_error`.
   */
  streamErrorType?: string;
  /** Requests whose connection is destroyed mid-stream (streaming) or mid-body (non-streaming). */
  cutStreamOn?: number[];
  /** Streaming: an `event: error` (overloaded_error) right after message_start; non-streaming: a 529. */
  streamErrorOn?: number[];
  /** Requests held unanswered until `releaseStalls()` (then answered normally) or `close()`. */
  stallOn?: number[];
  /**
   * Hold the next N requests that continue a session's work, like `stallOn`: their messages hold
   * at least one assistant turn and no `<baton_end_of_session>` tag (with `threads`, only the
   * request body is looked at). Counts down as they arrive. For tests that need sessions parked
   * mid-work, past their first turn and not yet closing, whatever turn they are in.
   */
  stallNextWork?: number;
  /**
   * Faults for the next requests that continue a session's work (as `stallNextWork` picks them:
   * an assistant turn in the history, no end-of-session tag), one each, in order: the first such
   * request gets the first fault, and so on; each is removed as it is used (an SDK or harness
   * retry is a new request and takes the next one). For a real process whose request numbers a
   * test cannot know. Applied before every other fault.
   */
  nextWorkFaults?: WorkFault[];
  /** Requests answered with `stop_reason: "max_tokens"` and a cut-off text block. */
  maxTokensOn?: number[];
  /** Requests answered with `stop_reason: "refusal"`. */
  refusalOn?: number[];
  /** Requests answered with `stop_reason: "pause_turn"` (text only; the client sends the turn again to go on). */
  pauseTurnOn?: number[];
  /** Requests answered with `stop_reason: "model_context_window_exceeded"` and a cut-off text block. */
  contextWindowExceededOn?: number[];
  /** Value of the `retry-after` header on 429/529 answers, in seconds. Default 0 (tests stay fast). */
  retryAfterSeconds?: number;
}

/** A fault `nextWorkFaults` applies to one request, named after the per-request faults. */
export type WorkFault =
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limit'
  | 'overloaded'
  | 'server_error'
  | 'cut_stream'
  | 'stream_error'
  | 'max_tokens'
  | 'refusal'
  | 'pause_turn'
  | 'context_window_exceeded'
  | 'empty_reply';

/** What a `script` hook may answer instead of the scripted agent. */
export type SimScriptResult =
  | {
      /** Assistant content blocks; `tool_use` ids are filled in when missing. */
      content: Array<SimContentBlock>;
      /** Default: `tool_use` when the content holds a tool_use block, else `end_turn`. */
      stopReason?: BetaStopReason;
    }
  | {
      /** An API error answered instead of a message. */
      error: { status: number; type: string; message: string; retryAfterSeconds?: number };
    };

/** A content block a script returns: a text block or a tool_use block (id optional). */
export type SimContentBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: unknown; id?: string };

/** What a `script` hook sees of one request. */
export interface SimScriptRequest {
  /** 1-based number of this `/v1/messages` request. */
  number: number;
  /** The request body with a message thread resolved into the full history. */
  params: MessageCreateParamsBase;
  /** The history as the model sees it, after the emulated context editing. */
  messages: BetaMessageParam[];
  /** Request headers, lower-cased names. */
  headers: Record<string, string | string[] | undefined>;
}

/** Custom responses for tests: return undefined to let the scripted agent answer. */
export type SimScript = (
  request: SimScriptRequest,
) => SimScriptResult | undefined | Promise<SimScriptResult | undefined>;

export interface ModelSimOptions {
  /** Port to listen on; 0 picks a free one. Default 0. */
  port?: number;
  /** Interface to bind. Default '127.0.0.1'. */
  host?: string;
  /** Faults from the start; replace them later with `setFaults` or `POST /_sim/faults`. Default none. */
  faults?: SimFaults | undefined;
  /** Custom responses before the scripted agent; see {@link SimScript}. Default none. */
  script?: SimScript | undefined;
  /**
   * Keep message threads (`thread: { type: 'create' | 'continue' }`) server-side by message id.
   * false: reject any `thread` with 400 `thread_unsupported_request`. Default true.
   */
  threads?: boolean;
  /** Most threads kept; the oldest is forgotten first (a continue then gets `thread_not_found`). Default 1000. */
  maxThreads?: number;
  /**
   * Reject `context_management` sent without the `context-management-2025-06-27` beta header, as
   * the API does for beta fields. Default true; turn it off only in a test about this rule.
   */
  requireBetaHeaders?: boolean | undefined;
  /**
   * The context window in tokens: one number for every model, or per model id (ids not listed get
   * `DEFAULT_CONTEXT_WINDOW`). A prompt over it is `400 prompt is too long: N tokens > M
   * maximum`; a reply that would take the prompt past it stops with
   * `model_context_window_exceeded`. Default 200 000 for every model.
   */
  contextWindow?: number | Readonly<Record<string, number>> | undefined;
  /** Largest request body in bytes; a larger one is `413 request_too_large`. Default 32 MiB (the API's). */
  maxRequestBytes?: number | undefined;
  /** Let the agent issue several tool calls in one turn where it reads files. Default true. */
  parallelToolCalls?: boolean;
  /** How many request records `received` keeps (oldest dropped first). Default 500. */
  maxRecords?: number;
  /** The clock of cache lifetimes, in ms (tests move it to expire entries). Default `Date.now`. */
  clock?: () => number;
  /** Minimum cacheable prefix for every model. Default: the model's (`minCacheableTokens`; `sim` 512). */
  minCacheableTokens?: number;
  /** Prompt-cache entries kept at most (expired, then oldest, go first). Default 10 000. */
  maxCacheEntries?: number;
}

/** One `/v1/messages` or `count_tokens` request as the simulator handled it. */
export interface SimRequestRecord {
  /** 1-based number among `/v1/messages` requests (0 for count_tokens). */
  number: number;
  /** When the request arrived (`Date.now()`, ms): retry delays are measured from these. */
  at: number;
  path: '/v1/messages' | '/v1/messages/count_tokens';
  stream: boolean;
  status: number;
  /** The request's `model` (absent when the body could not be read). */
  model?: string;
  /** The request's `max_tokens` (absent when the body could not be read). */
  maxTokens?: number;
  /** The fault applied, if any. */
  fault?: string;
  stopReason?: string;
  inputTokensBefore?: number;
  inputTokensAfter?: number;
  outputTokens?: number;
  appliedEdits?: unknown[];
  /** 'create' | 'continue' when the request used a message thread. */
  thread?: string;
  /** Names of the tools the response called. */
  toolCalls?: string[];
  /**
   * The `type` of every edit in the request's `context_management`, in request order; absent
   * when the request sent no `context_management`.
   */
  contextEdits?: string[];
  /** The request's `context_management` as sent; absent when the request sent none. */
  contextManagement?: unknown;
  /** What the prompt cache did: breakpoints sent, tokens read, written per TTL, and uncached. */
  cache?: {
    breakpoints: number;
    /** The TTL of each breakpoint, in prompt order (tools, system, messages). */
    breakpointTtls: Array<'5m' | '1h'>;
    readInputTokens: number;
    write5mInputTokens: number;
    write1hInputTokens: number;
    uncachedInputTokens: number;
  };
}

export interface SimStats {
  requests: number;
  countTokensRequests: number;
  stalled: number;
  openConnections: number;
  threads: number;
  /** Live prompt-cache entries. */
  cacheEntries: number;
  faults: SimFaults;
  statuses: Record<string, number>;
}

export interface ModelSim {
  /** Base URL to pass as `baseURL`, e.g. 'http://127.0.0.1:43121'. */
  readonly url: string;
  /** `/v1/messages` requests seen so far. */
  readonly requests: number;
  /** Request records, oldest first (at most `maxRecords`). */
  readonly received: readonly SimRequestRecord[];
  /** Replace the faults at runtime (same as `POST /_sim/faults`). */
  setFaults(faults: SimFaults): void;
  /** Answer every stalled request now (same as `POST /_sim/release`). */
  releaseStalls(): void;
  /** Resolves once `count` requests are stalled (for tests; rejects after `timeoutMs`, default 5000). */
  waitForStalled(count?: number, timeoutMs?: number): Promise<void>;
  stats(): SimStats;
  /** Ends stalled requests, destroys open sockets and stops listening. */
  close(): Promise<void>;
}
