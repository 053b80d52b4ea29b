import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type {
  BetaMessage,
  BetaMessageParam,
  BetaStopReason,
  MessageCreateParamsBase,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { ModelSimError } from './errors.js';
import { planTurn } from './internal/agent/agent.js';
import {
  ApiError,
  errorBody,
  errorTypeForStatus,
  invalidRequest,
  shouldRetry,
} from './internal/api-errors.js';
import { applyContextEditing, estimateOutputTokens } from './internal/context-editing.js';
import {
  FAULT_MESSAGES,
  faultAfter,
  faultBefore,
  isMidWorkRequest,
  parseFaults,
} from './internal/faults.js';
import type { PlannedFault } from './internal/faults.js';
import { randomId } from './internal/ids.js';
import {
  buildMessage,
  formatSse,
  refusalDetails,
  streamEvents,
  toMessageParam,
} from './internal/message.js';
import type { SimBlock } from './internal/message.js';
import { createThreadStore } from './internal/threads.js';
import {
  parseJsonBody,
  validateCountTokensBody,
  validateCreateBody,
  validateMessages,
} from './internal/validate.js';
import type {
  ModelSim,
  ModelSimOptions,
  SimFaults,
  SimRequestRecord,
  SimScriptResult,
  SimStats,
} from './types.js';

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const CONTEXT_MANAGEMENT_BETA = 'context-management-';

interface Waiter {
  release: () => void;
}

/** The simulator's state shared by every request. */
interface SimState {
  faults: SimFaults;
  requests: number;
  countTokensRequests: number;
  stalled: Set<Waiter>;
  sleeping: Set<Waiter>;
  stallListeners: Set<() => void>;
  sockets: Set<Socket>;
  records: SimRequestRecord[];
  statuses: Record<string, number>;
  closed: boolean;
}

/**
 * Starts the simulator on `host:port` (default 127.0.0.1 and a free port). Resolves once it
 * listens; `url` is the base URL to hand to the SDK as `baseURL`.
 */
export async function startModelSim(options: ModelSimOptions = {}): Promise<ModelSim> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ModelSimError(
      'invalid_options',
      `port must be an integer from 0 to 65535, got ${String(port)}.`,
    );
  }
  const state: SimState = {
    faults: parseFaults(options.faults ?? {}),
    requests: 0,
    countTokensRequests: 0,
    stalled: new Set(),
    sleeping: new Set(),
    stallListeners: new Set(),
    sockets: new Set(),
    records: [],
    statuses: {},
    closed: false,
  };
  const threads = createThreadStore({
    enabled: options.threads ?? true,
    maxThreads: options.maxThreads ?? 1000,
  });
  const maxRecords = options.maxRecords ?? 500;
  const requireBetaHeaders = options.requireBetaHeaders ?? true;
  const parallelToolCalls = options.parallelToolCalls ?? true;

  const notifyStalls = () => {
    for (const listener of state.stallListeners) listener();
  };

  const record = (entry: SimRequestRecord) => {
    state.records.push(entry);
    if (state.records.length > maxRecords)
      state.records.splice(0, state.records.length - maxRecords);
    state.statuses[String(entry.status)] = (state.statuses[String(entry.status)] ?? 0) + 1;
  };

  /** Waits `ms`, cut short by close(). */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const waiter: Waiter = {
        release: () => {
          clearTimeout(timer);
          state.sleeping.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.release, ms);
      state.sleeping.add(waiter);
    });

  /** Holds a request until releaseStalls() or close(). */
  const stall = () =>
    new Promise<void>((resolve) => {
      const waiter: Waiter = {
        release: () => {
          state.stalled.delete(waiter);
          resolve();
        },
      };
      state.stalled.add(waiter);
      notifyStalls();
    });

  const releaseStalls = () => {
    for (const waiter of [...state.stalled]) waiter.release();
  };

  const stats = (): SimStats => ({
    requests: state.requests,
    countTokensRequests: state.countTokensRequests,
    stalled: state.stalled.size,
    openConnections: state.sockets.size,
    threads: threads.size,
    faults: state.faults,
    statuses: { ...state.statuses },
  });

  async function handleMessages(
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
  ) {
    const number = ++state.requests;
    const entry: SimRequestRecord = { number, path: '/v1/messages', stream: false, status: 200 };
    const fail = (error: ApiError) => {
      entry.status = error.status;
      record(entry);
      sendError(response, error, requestId);
    };
    let body: Record<string, unknown>;
    try {
      body = parseJsonBody(await readBody(request));
    } catch (error) {
      return fail(asApiError(error));
    }
    entry.stream = body['stream'] === true;
    await sleep(state.faults.latencyMs ?? 0);
    if (state.closed) return destroy(response);

    const before = faultBefore(state.faults, number);
    const stallWork = (state.faults.stallNextWork ?? 0) > 0 && isMidWorkRequest(body);
    if (stallWork) {
      state.faults = { ...state.faults, stallNextWork: (state.faults.stallNextWork ?? 1) - 1 };
    }
    if (before?.kind === 'stall' || stallWork) {
      entry.fault = 'stall';
      await stall();
      if (state.closed || response.destroyed) return destroy(response);
    } else if (before?.kind === 'error') {
      entry.fault = before.name;
      const { type, message } = FAULT_MESSAGES[before.status];
      return fail(
        new ApiError(type, message, {
          status: before.status,
          ...(before.status === 500
            ? {}
            : { retryAfterSeconds: state.faults.retryAfterSeconds ?? 0 }),
        }),
      );
    }

    let message: BetaMessage;
    let after: PlannedFault | undefined;
    try {
      validateCreateBody(body);
      checkBetas(body, request, requireBetaHeaders);
      const resolved = threads.resolve(body);
      validateMessages(resolved.messages);
      if (resolved.thread) entry.thread = resolved.thread.type;
      const history = resolved.messages as BetaMessageParam[];
      const edited = applyContextEditing({
        messages: history,
        system: resolved.system,
        tools: resolved.tools,
        contextManagement: body['context_management'],
      });
      entry.inputTokensBefore = edited.inputTokensBefore;
      entry.inputTokensAfter = edited.inputTokensAfter;
      entry.appliedEdits = edited.response?.applied_edits ?? [];

      const params = {
        ...body,
        system: resolved.system,
        tools: resolved.tools,
        messages: history,
      } as MessageCreateParamsBase;
      const turn = Math.max(1, history.filter((item) => item.role === 'assistant').length + 1);
      const scripted = options.script
        ? await options.script({
            number,
            params,
            messages: edited.messages,
            headers: request.headers,
          })
        : undefined;
      if (scripted && 'error' in scripted) {
        const { status, type, message: text, retryAfterSeconds } = scripted.error;
        throw new ApiError(type || errorTypeForStatus(status), text, {
          status,
          ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
        });
      }
      const produced = scripted
        ? fromScript(scripted, turn)
        : fromAgent(edited.messages, resolved.tools, turn, parallelToolCalls);

      after = faultAfter(state.faults, number);
      const maxTokens = body['max_tokens'] as number;
      let { blocks, stopReason } = produced;
      let outputTokens = estimateOutputTokens(blocks);
      let stopDetails = null;
      if (after?.kind === 'max_tokens' || outputTokens > maxTokens) {
        if (after?.kind === 'max_tokens') entry.fault = 'max-tokens';
        blocks = truncate(blocks, after?.kind === 'max_tokens' ? undefined : maxTokens);
        stopReason = 'max_tokens';
        outputTokens = maxTokens;
      } else if (after?.kind === 'context_window') {
        entry.fault = 'context-window-exceeded';
        blocks = truncate(blocks, undefined);
        stopReason = 'model_context_window_exceeded';
        outputTokens = estimateOutputTokens(blocks);
      } else if (after?.kind === 'pause_turn') {
        // The model pauses before acting: its words so far, no tool call; sending the turn again goes on.
        entry.fault = 'pause-turn';
        blocks = blocks.filter((block) => block.type === 'text');
        stopReason = 'pause_turn';
        outputTokens = estimateOutputTokens(blocks);
      } else if (after?.kind === 'refusal') {
        entry.fault = 'refusal';
        blocks = [{ type: 'text', text: "I can't help with this request (simulated refusal)." }];
        stopReason = 'refusal';
        outputTokens = estimateOutputTokens(blocks);
        stopDetails = refusalDetails();
      }
      message = buildMessage({
        id: randomId('msg_sim_'),
        model: body['model'] as string,
        blocks,
        stopReason,
        inputTokens: edited.inputTokensAfter,
        outputTokens,
        contextManagement: edited.response,
        stopDetails,
      });
      entry.stopReason = stopReason;
      entry.outputTokens = outputTokens;
      entry.toolCalls = blocks.flatMap((block) => (block.type === 'tool_use' ? [block.name] : []));
      // A cut reply never reached the client whole, so the thread does not keep it (as the API).
      if (after?.kind !== 'cut' && after?.kind !== 'stream_error') {
        threads.record(resolved, message.id, toMessageParam(message));
      }
    } catch (error) {
      return fail(asApiError(error));
    }

    if (after?.kind === 'cut') entry.fault = 'cut-stream';
    if (after?.kind === 'stream_error') {
      entry.fault = 'stream-error';
      if (!entry.stream) {
        const { type, message: text } = FAULT_MESSAGES[529];
        return fail(
          new ApiError(type, text, {
            status: 529,
            retryAfterSeconds: state.faults.retryAfterSeconds ?? 0,
          }),
        );
      }
    }
    record(entry);
    if (entry.stream) {
      const mode =
        after?.kind === 'cut' ? 'cut' : after?.kind === 'stream_error' ? 'error' : 'full';
      const delay = state.faults.eventDelayMs ?? 0;
      if (mode === 'full' && delay > 0) return sendSlowStream(response, message, requestId, delay);
      sendStream(response, message, requestId, mode);
    } else sendJson(response, 200, message, requestId, after?.kind === 'cut');
  }

  /** A stream written one event at a time with a pause between events; close() cuts it. */
  async function sendSlowStream(
    response: ServerResponse,
    message: BetaMessage,
    requestId: string,
    delayMs: number,
  ) {
    if (response.destroyed) return;
    response.writeHead(200, sseHeaders(requestId));
    for (const event of streamEvents(message)) {
      if (state.closed || response.destroyed) return destroy(response);
      response.write(formatSse(event));
      if (event.type !== 'message_stop') await sleep(delayMs);
    }
    response.end();
  }

  async function handleCountTokens(
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
  ) {
    state.countTokensRequests += 1;
    const entry: SimRequestRecord = {
      number: 0,
      path: '/v1/messages/count_tokens',
      stream: false,
      status: 200,
    };
    try {
      const body = parseJsonBody(await readBody(request));
      validateCountTokensBody(body);
      checkBetas(body, request, requireBetaHeaders);
      const edited = applyContextEditing({
        messages: body['messages'] as BetaMessageParam[],
        system: body['system'],
        tools: body['tools'],
        contextManagement: body['context_management'],
      });
      entry.inputTokensBefore = edited.inputTokensBefore;
      entry.inputTokensAfter = edited.inputTokensAfter;
      record(entry);
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
      record(entry);
      sendError(response, apiError, requestId);
    }
  }

  async function handleControl(
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
    path: string,
  ) {
    if (path === '/_sim/stats' && request.method === 'GET') {
      return sendJson(response, 200, stats(), requestId);
    }
    if (path === '/_sim/faults' && request.method === 'POST') {
      try {
        const raw = await readBody(request);
        state.faults = parseFaults(raw.trim() === '' ? {} : parseJsonBody(raw));
      } catch (error) {
        return sendError(response, asApiError(error), requestId);
      }
      return sendJson(response, 200, { faults: state.faults }, requestId);
    }
    if (path === '/_sim/release' && request.method === 'POST') {
      const released = state.stalled.size;
      releaseStalls();
      return sendJson(response, 200, { released }, requestId);
    }
    return sendError(
      response,
      new ApiError('not_found_error', `Not found: ${request.method ?? 'GET'} ${path}`),
      requestId,
    );
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const requestId = randomId('req_sim_');
    response.setHeader('request-id', requestId);
    const path = new URL(request.url ?? '/', 'http://sim.invalid').pathname;
    if (path.startsWith('/_sim/')) return handleControl(request, response, requestId, path);
    if (path === '/' && request.method === 'GET') {
      return sendJson(
        response,
        200,
        {
          name: 'baton-model-sim',
          endpoints: [
            '/v1/messages',
            '/v1/messages/count_tokens',
            '/_sim/stats',
            '/_sim/faults',
            '/_sim/release',
          ],
        },
        requestId,
      );
    }
    const known = path === '/v1/messages' || path === '/v1/messages/count_tokens';
    if (!known || request.method !== 'POST') {
      return sendError(
        response,
        new ApiError('not_found_error', `Not found: ${request.method ?? 'GET'} ${path}`),
        requestId,
      );
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
    if (path === '/v1/messages') return handleMessages(request, response, requestId);
    return handleCountTokens(request, response, requestId);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return destroy(response);
      sendError(
        response,
        new ApiError(
          'api_error',
          `The simulator failed: ${String((error as Error)?.message ?? error)}`,
        ),
        'req_sim_internal',
      );
    });
  });
  server.on('connection', (socket: Socket) => {
    state.sockets.add(socket);
    socket.on('close', () => state.sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(
        new ModelSimError(
          'listen_failed',
          `The model simulator could not listen on ${host}:${port}: ${error.message}`,
          { cause: error },
        ),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    get requests() {
      return state.requests;
    },
    get received() {
      return state.records;
    },
    setFaults(faults: SimFaults) {
      state.faults = parseFaults(faults);
    },
    releaseStalls,
    waitForStalled(count = 1, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (state.stalled.size >= count) {
            cleanup();
            resolve();
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new ModelSimError(
              'timeout',
              `Timed out after ${timeoutMs} ms waiting for ${count} stalled request(s); ${state.stalled.size} stalled.`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          state.stallListeners.delete(check);
        };
        state.stallListeners.add(check);
        check();
      });
    },
    stats,
    close() {
      closing ??= (async () => {
        state.closed = true;
        for (const waiter of [...state.sleeping]) waiter.release();
        releaseStalls();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of state.sockets) socket.destroy();
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

function fromAgent(
  messages: BetaMessageParam[],
  tools: unknown,
  turn: number,
  parallelToolCalls: boolean,
): { blocks: SimBlock[]; stopReason: BetaStopReason } {
  const names = new Set<string>();
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      const name = (tool as { name?: unknown } | null)?.name;
      if (typeof name === 'string') names.add(name);
    }
  }
  const planned = planTurn(messages, { tools: names, parallelToolCalls });
  const blocks: SimBlock[] = [{ type: 'text', text: planned.text }];
  planned.calls.forEach((call, index) => {
    blocks.push({
      type: 'tool_use',
      id: `toolu_sim_t${turn}c${index}_${call.step}`,
      name: call.name,
      input: call.input,
    });
  });
  return { blocks, stopReason: planned.calls.length > 0 ? 'tool_use' : 'end_turn' };
}

function fromScript(
  result: Extract<SimScriptResult, { content: unknown }>,
  turn: number,
): { blocks: SimBlock[]; stopReason: BetaStopReason } {
  const blocks: SimBlock[] = result.content.map((block, index) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : {
          type: 'tool_use',
          id: block.id ?? `toolu_sim_t${turn}c${index}_script`,
          name: block.name,
          input: block.input,
        },
  );
  const hasToolUse = blocks.some((block) => block.type === 'tool_use');
  return { blocks, stopReason: result.stopReason ?? (hasToolUse ? 'tool_use' : 'end_turn') };
}

/**
 * Cuts a reply at `maxTokens` (about 4 characters a token) or, for the injected fault, halfway
 * through its first text; tool calls are dropped, since their input would be incomplete.
 */
function truncate(blocks: SimBlock[], maxTokens: number | undefined): SimBlock[] {
  const text =
    blocks.find((block): block is Extract<SimBlock, { type: 'text' }> => block.type === 'text')
      ?.text ?? '';
  const limit = maxTokens === undefined ? Math.max(1, Math.floor(text.length / 2)) : maxTokens * 4;
  return [{ type: 'text', text: text.slice(0, limit) }];
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
  if (!betas.some((beta) => beta.startsWith(CONTEXT_MANAGEMENT_BETA))) {
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

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new ApiError(
            'request_too_large',
            `Request exceeds the maximum allowed number of bytes (${MAX_BODY_BYTES}).`,
          ),
        );
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function destroy(response: ServerResponse): void {
  response.socket?.destroy();
  response.destroy();
}

function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  requestId: string,
  cut = false,
): void {
  if (response.destroyed) return;
  const text = JSON.stringify(payload);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': requestId,
  });
  if (!cut) {
    response.end(text);
    return;
  }
  // Half the body, then the connection drops: the client sees a truncated response.
  response.write(text.slice(0, Math.floor(text.length / 2)), () => destroy(response));
}

function sendError(response: ServerResponse, error: ApiError, requestId: string): void {
  if (response.destroyed) return;
  if (response.headersSent) return destroy(response);
  const headers: Record<string, string> = { 'x-should-retry': String(shouldRetry(error.status)) };
  if (error.retryAfterSeconds !== undefined)
    headers['retry-after'] = String(error.retryAfterSeconds);
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  sendJson(response, error.status, errorBody(error, requestId), requestId);
}

function sseHeaders(requestId: string): Record<string, string> {
  return {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': requestId,
  };
}

function sendStream(
  response: ServerResponse,
  message: BetaMessage,
  requestId: string,
  mode: 'full' | 'cut' | 'error',
): void {
  if (response.destroyed) return;
  response.writeHead(200, sseHeaders(requestId));
  const events = streamEvents(message);
  if (mode === 'full') {
    response.end(events.map(formatSse).join(''));
    return;
  }
  if (mode === 'error') {
    // The API reports an overload that happens after the 200 as an SSE error event.
    const { type, message: text } = FAULT_MESSAGES[529];
    const body = errorBody(new ApiError(type, text, { status: 529 }), requestId);
    response.end(`${formatSse(events[0]!)}event: error\ndata: ${JSON.stringify(body)}\n\n`);
    return;
  }
  // Up to the first delta: the client has a message_start and a started block, then nothing.
  const firstDelta = events.findIndex((event) => event.type === 'content_block_delta');
  const sent = events.slice(0, firstDelta < 0 ? 2 : firstDelta + 1);
  response.write(sent.map(formatSse).join(''), () => destroy(response));
}
