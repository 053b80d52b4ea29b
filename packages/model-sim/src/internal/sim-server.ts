import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type {
  BetaMessage,
  BetaMessageParam,
  MessageCreateParamsBase,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { ModelSimError } from '../errors.js';
import type { ModelSimOptions, SimFaults, SimRequestRecord, SimStats } from '../types.js';
import { ApiError, errorTypeForStatus, invalidRequest } from './api-errors.js';
import { applyContextEditing } from './context-editing.js';
import {
  FAULT_MESSAGES,
  faultAfter,
  faultBefore,
  plannedWorkFault,
  isMidWorkRequest,
  parseFaults,
} from './faults.js';
import type { PlannedFault } from './faults.js';
import { destroy, readBody, sendError, sendJson, sendSlowStream, sendStream } from './http.js';
import { randomId } from './ids.js';
import { buildMessage, toMessageParam } from './message.js';
import { PromptCache, unmarkRequest } from './prompt-cache.js';
import { type Reply, replyFromAgent, replyFromScript, shapeReply } from './reply.js';
import { type ThreadStore, createThreadStore } from './threads.js';
import {
  parseJsonBody,
  validateCountTokensBody,
  validateCreateBody,
  validateMessages,
} from './validate.js';
import { Waiters } from './waiters.js';

/** The beta `context_management` needs (api-rules.md; the context-editing documentation). */
const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

/** The context window of a model the `contextWindow` option does not name. */
const DEFAULT_CONTEXT_WINDOW = 200_000;

/** `max_tokens` the Models API reports for every simulated model. */
const SIM_MAX_OUTPUT_TOKENS = 64_000;

const ENDPOINTS = [
  '/v1/messages',
  '/v1/messages/count_tokens',
  '/v1/models/{model_id}',
  '/_sim/stats',
  '/_sim/faults',
  '/_sim/release',
];

/** One HTTP exchange: what a handler needs to answer and record it. */
interface Exchange {
  request: IncomingMessage;
  response: ServerResponse;
  requestId: string;
}

/** A `/v1/messages` request in flight. */
interface MessagesExchange extends Exchange {
  number: number;
  entry: SimRequestRecord;
  /** The `nextWorkFaults` entry this request took, if any: it replaces the per-request faults. */
  workFault?: PlannedFault | undefined;
}

/** A built answer and the after-faults that decide how it is sent. */
interface Answer {
  message: BetaMessage;
  after: PlannedFault | undefined;
}

/**
 * The simulator's state and request handling. `startModelSim` owns the HTTP server and hands
 * every request to `handle`.
 */
export class SimServer {
  faults: SimFaults;
  requests = 0;
  countTokensRequests = 0;
  closed = false;
  readonly waiters = new Waiters();
  readonly sockets = new Set<Socket>();
  readonly records: SimRequestRecord[] = [];

  readonly #options: ModelSimOptions;
  readonly #threads: ThreadStore;
  readonly #statuses: Record<string, number> = {};
  readonly #maxRecords: number;
  readonly #cache: PromptCache;

  constructor(options: ModelSimOptions) {
    this.#options = options;
    this.faults = parseFaults(options.faults ?? {});
    this.#threads = createThreadStore({
      enabled: options.threads ?? true,
      maxThreads: options.maxThreads ?? 1000,
    });
    this.#maxRecords = options.maxRecords ?? 500;
    this.#cache = new PromptCache({
      now: options.clock ?? Date.now,
      maxEntries: options.maxCacheEntries ?? 10_000,
      minCacheableTokens: options.minCacheableTokens,
    });
  }

  stats(): SimStats {
    return {
      requests: this.requests,
      countTokensRequests: this.countTokensRequests,
      stalled: this.waiters.stalled,
      openConnections: this.sockets.size,
      threads: this.#threads.size,
      cacheEntries: this.#cache.size,
      faults: this.faults,
      statuses: { ...this.#statuses },
    };
  }

  /** Routes one HTTP request. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomId('req_sim_');
    response.setHeader('request-id', requestId);
    const exchange: Exchange = { request, response, requestId };
    const path = new URL(request.url ?? '/', 'http://sim.invalid').pathname;
    if (path.startsWith('/_sim/')) return this.#handleControl(exchange, path);
    if (path === '/' && request.method === 'GET') {
      return sendJson(response, 200, { name: 'baton-model-sim', endpoints: ENDPOINTS }, requestId);
    }
    const model = request.method === 'GET' ? /^\/v1\/models\/([^/]+)$/.exec(path)?.[1] : undefined;
    const known = path === '/v1/messages' || path === '/v1/messages/count_tokens';
    if (model === undefined && (!known || request.method !== 'POST')) {
      return sendError(response, notFound(request, path), requestId);
    }
    if (!request.headers['x-api-key'] && !request.headers['authorization']) {
      return sendError(
        response,
        new ApiError(
          'authentication_error',
          'x-api-key header is required (any value is accepted by the simulator).',
        ),
        requestId,
      );
    }
    if (model !== undefined) return this.#handleModel(exchange, decodeURIComponent(model));
    if (path === '/v1/messages') return this.#handleMessages(exchange);
    return this.#handleCountTokens(exchange);
  }

  /**
   * `GET /v1/models/{model_id}`: the model's `max_input_tokens` (its context window, as the
   * Messages API enforces it here) and `max_tokens`; 404 for a model `unknownModels` names, as
   * the API answers a model it does not serve.
   */
  #handleModel({ response, requestId }: Exchange, model: string): void {
    if (this.faults.unknownModels?.includes(model)) {
      return sendError(response, new ApiError('not_found_error', `model: ${model}`), requestId);
    }
    sendJson(
      response,
      200,
      {
        type: 'model',
        id: model,
        display_name: model,
        created_at: '1970-01-01T00:00:00Z',
        capabilities: null,
        deprecated_at: null,
        lifecycle: 'active',
        line: null,
        max_input_tokens: this.#contextWindow(model),
        max_tokens: SIM_MAX_OUTPUT_TOKENS,
        retires_at: null,
      },
      requestId,
    );
  }

  #record(entry: SimRequestRecord): void {
    this.records.push(entry);
    if (this.records.length > this.#maxRecords)
      this.records.splice(0, this.records.length - this.#maxRecords);
    this.#statuses[String(entry.status)] = (this.#statuses[String(entry.status)] ?? 0) + 1;
  }

  #fail(exchange: MessagesExchange, error: ApiError): void {
    exchange.entry.status = error.status;
    this.#record(exchange.entry);
    sendError(exchange.response, error, exchange.requestId);
  }

  /** `/v1/messages`: read, wait, before-faults, answer, send. */
  async #handleMessages(base: Exchange): Promise<void> {
    const number = ++this.requests;
    const exchange: MessagesExchange = {
      ...base,
      number,
      entry: { number, at: Date.now(), path: '/v1/messages', stream: false, status: 200 },
    };
    let body: Record<string, unknown>;
    try {
      body = parseJsonBody(await readBody(exchange.request, this.#options.maxRequestBytes));
    } catch (error) {
      return this.#fail(exchange, asApiError(error));
    }
    exchange.entry.stream = body['stream'] === true;
    if (typeof body['model'] === 'string') exchange.entry.model = body['model'];
    if (typeof body['max_tokens'] === 'number') exchange.entry.maxTokens = body['max_tokens'];
    await this.waiters.sleep(this.faults.latencyMs ?? 0);
    if (this.closed) return destroy(exchange.response);
    if (!(await this.#passBeforeFaults(exchange, body))) return;
    let answer: Answer;
    try {
      answer = await this.#answer(exchange, body);
    } catch (error) {
      return this.#fail(exchange, asApiError(error));
    }
    return this.#send(exchange, answer);
  }

  /** Stalls or fails the request when a fault says so; false when the request is done. */
  async #passBeforeFaults(
    exchange: MessagesExchange,
    body: Record<string, unknown>,
  ): Promise<boolean> {
    const queued = this.faults.nextWorkFaults ?? [];
    if (queued.length > 0 && isMidWorkRequest(body)) {
      const [next, ...rest] = queued;
      this.faults = { ...this.faults, nextWorkFaults: rest };
      if (next !== undefined) exchange.workFault = plannedWorkFault(next);
    }
    const work = exchange.workFault;
    const before =
      work === undefined
        ? faultBefore(this.faults, exchange.number, body['model'])
        : work.kind === 'error'
          ? work
          : undefined;
    const stallWork = (this.faults.stallNextWork ?? 0) > 0 && isMidWorkRequest(body);
    if (stallWork) {
      this.faults = { ...this.faults, stallNextWork: (this.faults.stallNextWork ?? 1) - 1 };
    }
    if (before?.kind === 'stall' || stallWork) {
      exchange.entry.fault = 'stall';
      await this.waiters.stall();
      if (this.closed || exchange.response.destroyed) {
        destroy(exchange.response);
        return false;
      }
      return true;
    }
    if (before?.kind === 'error') {
      exchange.entry.fault = before.name;
      const { type, message } = FAULT_MESSAGES[before.status];
      const retryAfter = before.status === 429 || before.status === 529;
      this.#fail(
        exchange,
        new ApiError(type, before.message ?? message, {
          status: before.status,
          ...(retryAfter ? { retryAfterSeconds: this.faults.retryAfterSeconds ?? 0 } : {}),
        }),
      );
      return false;
    }
    return true;
  }

  /** Validates the request, edits the context, lets the script or the agent speak, shapes the reply. */
  async #answer(exchange: MessagesExchange, body: Record<string, unknown>): Promise<Answer> {
    const { entry, number } = exchange;
    const { resolved, unmarked, edited, cache } = this.#readPrompt(exchange, body);
    const history = unmarked.messages;
    const turn = Math.max(1, history.filter((item) => item.role === 'assistant').length + 1);
    const params = {
      ...body,
      system: unmarked.system,
      tools: unmarked.tools,
      messages: history,
    } as MessageCreateParamsBase;
    const window = this.#contextWindow(body['model'] as string);
    const promptTokens = edited.inputTokensAfter;
    if (promptTokens > window) {
      throw invalidRequest(`prompt is too long: ${promptTokens} tokens > ${window} maximum`);
    }
    const reply = await this.#reply(exchange, params, edited.messages, turn);
    const work = exchange.workFault;
    const after = work === undefined ? faultAfter(this.faults, number) : work;
    const shaped = shapeReply(reply, after, body['max_tokens'] as number, window - promptTokens);
    if (shaped.fault !== undefined) entry.fault = shaped.fault;
    const message = buildMessage({
      id: randomId('msg_sim_'),
      model: body['model'] as string,
      blocks: shaped.blocks,
      stopReason: shaped.stopReason,
      inputTokens: cache.uncachedInputTokens,
      cache,
      outputTokens: shaped.outputTokens,
      contextManagement: edited.response,
      stopDetails: shaped.stopDetails,
    });
    entry.stopReason = shaped.stopReason;
    entry.outputTokens = shaped.outputTokens;
    entry.toolCalls = shaped.blocks.flatMap((block) =>
      block.type === 'tool_use' ? [block.name] : [],
    );
    // A cut reply never reached the client whole, so the thread does not keep it (as the API).
    if (after?.kind !== 'cut' && after?.kind !== 'stream_error') {
      this.#threads.record(resolved, message.id, toMessageParam(message));
    }
    return { message, after };
  }

  /** The context window of `model` (the `contextWindow` option, else the default). */
  #contextWindow(model: string): number {
    const option = this.#options.contextWindow;
    if (typeof option === 'number') return option;
    return option?.[model] ?? DEFAULT_CONTEXT_WINDOW;
  }

  /**
   * Validates a create request and works out what the model sees and what the cache bills:
   * the thread's history, the prompt without its cache marks, the context edits applied.
   * Records all of it on the exchange's entry.
   */
  #readPrompt({ entry, request }: MessagesExchange, body: Record<string, unknown>) {
    validateCreateBody(body);
    checkBetas(body, request, this.#options.requireBetaHeaders ?? true);
    const resolved = this.#threads.resolve(body);
    validateMessages(resolved.messages);
    if (resolved.thread) entry.thread = resolved.thread.type;
    // The model and the cache see the prompt without its cache_control marks.
    const unmarked = unmarkRequest({
      tools: resolved.tools,
      system: resolved.system,
      messages: resolved.messages as BetaMessageParam[],
      topLevel: body['cache_control'],
    });
    const edited = applyContextEditing({
      messages: unmarked.messages,
      system: unmarked.system,
      tools: unmarked.tools,
      contextManagement: body['context_management'],
    });
    const cache = this.#cache.bill({
      model: body['model'] as string,
      tools: unmarked.tools,
      system: unmarked.system,
      messages: edited.messages,
      marks: unmarked.marks,
    });
    entry.cache = {
      breakpoints: unmarked.marks.length,
      breakpointTtls: unmarked.marks.map((mark) => mark.ttl),
      ...cache,
    };
    const sentEdits = (body['context_management'] as { edits?: Array<{ type?: unknown }> } | null)
      ?.edits;
    if (body['context_management'] !== undefined && body['context_management'] !== null) {
      entry.contextEdits = (sentEdits ?? []).map((edit) => String(edit.type));
      entry.contextManagement = body['context_management'];
    }
    entry.inputTokensBefore = edited.inputTokensBefore;
    entry.inputTokensAfter = edited.inputTokensAfter;
    entry.appliedEdits = edited.response?.applied_edits ?? [];

    return { resolved, unmarked, edited, cache };
  }

  /** The test script's answer when it gives one, else the scripted agent's. */
  async #reply(
    exchange: MessagesExchange,
    params: MessageCreateParamsBase,
    messages: BetaMessageParam[],
    turn: number,
  ): Promise<Reply> {
    const script = this.#options.script;
    const scripted = script
      ? await script({
          number: exchange.number,
          params,
          messages,
          headers: exchange.request.headers,
        })
      : undefined;
    if (scripted && 'error' in scripted) {
      const { status, type, message, retryAfterSeconds } = scripted.error;
      throw new ApiError(type || errorTypeForStatus(status), message, {
        status,
        retryAfterSeconds,
      });
    }
    if (scripted) return replyFromScript(scripted, turn);
    return replyFromAgent(messages, params.tools, turn, this.#options.parallelToolCalls ?? true);
  }

  /** Sends the answer as JSON or a stream; the cut and stream-error faults break it on the way. */
  async #send(exchange: MessagesExchange, { message, after }: Answer): Promise<void> {
    const { entry, response, requestId } = exchange;
    if (after?.kind === 'cut') entry.fault = 'cut-stream';
    if (after?.kind === 'stream_error') {
      entry.fault = 'stream-error';
      if (!entry.stream) {
        const { type, message: text } = FAULT_MESSAGES[529];
        return this.#fail(
          exchange,
          new ApiError(type, text, {
            status: 529,
            retryAfterSeconds: this.faults.retryAfterSeconds ?? 0,
          }),
        );
      }
    }
    this.#record(entry);
    if (!entry.stream) {
      sendJson(response, 200, message, requestId, after?.kind === 'cut');
      return;
    }
    const mode = after?.kind === 'cut' ? 'cut' : after?.kind === 'stream_error' ? 'error' : 'full';
    const delay = this.faults.eventDelayMs ?? 0;
    if (mode === 'full' && delay > 0) {
      return sendSlowStream(
        response,
        message,
        requestId,
        () => this.waiters.sleep(delay),
        () => this.closed,
      );
    }
    sendStream(response, message, requestId, mode, this.faults.streamErrorType);
  }

  async #handleCountTokens({ request, response, requestId }: Exchange): Promise<void> {
    this.countTokensRequests += 1;
    const entry: SimRequestRecord = {
      number: 0,
      at: Date.now(),
      path: '/v1/messages/count_tokens',
      stream: false,
      status: 200,
    };
    try {
      const body = parseJsonBody(await readBody(request, this.#options.maxRequestBytes));
      validateCountTokensBody(body);
      checkBetas(body, request, this.#options.requireBetaHeaders ?? true);
      const unmarked = unmarkRequest({
        tools: body['tools'],
        system: body['system'],
        messages: body['messages'] as BetaMessageParam[],
        topLevel: body['cache_control'],
      });
      const edited = applyContextEditing({
        messages: unmarked.messages,
        system: unmarked.system,
        tools: unmarked.tools,
        contextManagement: body['context_management'],
      });
      entry.inputTokensBefore = edited.inputTokensBefore;
      entry.inputTokensAfter = edited.inputTokensAfter;
      this.#record(entry);
      sendJson(
        response,
        200,
        {
          input_tokens: edited.inputTokensAfter,
          context_management: edited.response
            ? { original_input_tokens: edited.inputTokensBefore }
            : null,
        },
        requestId,
      );
    } catch (error) {
      const apiError = asApiError(error);
      entry.status = apiError.status;
      this.#record(entry);
      sendError(response, apiError, requestId);
    }
  }

  async #handleControl({ request, response, requestId }: Exchange, path: string): Promise<void> {
    if (path === '/_sim/stats' && request.method === 'GET') {
      return sendJson(response, 200, this.stats(), requestId);
    }
    if (path === '/_sim/faults' && request.method === 'POST') {
      try {
        const raw = await readBody(request);
        this.faults = parseFaults(raw.trim() === '' ? {} : parseJsonBody(raw));
      } catch (error) {
        return sendError(response, asApiError(error), requestId);
      }
      return sendJson(response, 200, { faults: this.faults }, requestId);
    }
    if (path === '/_sim/release' && request.method === 'POST') {
      return sendJson(response, 200, { released: this.waiters.releaseStalls() }, requestId);
    }
    return sendError(response, notFound(request, path), requestId);
  }
}

function notFound(request: IncomingMessage, path: string): ApiError {
  return new ApiError('not_found_error', `Not found: ${request.method ?? 'GET'} ${path}`);
}

function checkBetas(
  body: Record<string, unknown>,
  request: IncomingMessage,
  required: boolean,
): void {
  const contextManagement = body['context_management'];
  if (!required || contextManagement === undefined || contextManagement === null) return;
  const header = request.headers['anthropic-beta'];
  const betas = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((beta) => beta.trim());
  if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) {
    throw invalidRequest(
      'context_management: this field is in beta; send the `anthropic-beta: context-management-2025-06-27` header (the SDK sends it when `betas` lists it).',
    );
  }
}

function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ModelSimError && error.code === 'invalid_faults')
    return invalidRequest(error.message);
  return new ApiError(
    'api_error',
    `The simulator failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}
