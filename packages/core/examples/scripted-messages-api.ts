/**
 * A tiny local stand-in for the Messages API (`POST /v1/messages`, non-streaming) that answers
 * with a scripted sequence of assistant turns. Used by the end-to-end test and the demo to drive
 * the real SDK `toolRunner` without network access or an API key.
 *
 * Each request gets the next scripted turn: a list of `tool_use` inputs for the `memory` tool
 * (stop reason `tool_use`), or, once the script is exhausted, a closing text (`end_turn`).
 * Every request body is recorded, so a test can read the `tool_result` blocks (and their
 * `is_error` flags) the runner sent back.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  BetaMessage,
  BetaMessageParam,
  BetaToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages';

/** One scripted assistant turn: the memory-tool inputs it calls, in order. */
export type ScriptedTurn = Array<Record<string, unknown>>;

/** A running stand-in. */
export interface ScriptedMessagesApi {
  /** Pass as `baseURL` to the SDK client. */
  url: string;
  /** Every `/v1/messages` request body received, in order. */
  requests: Array<{ messages: BetaMessageParam[]; tools?: unknown[]; thread?: unknown }>;
  /** The `tool_result` blocks of every request's last user message, in order. */
  toolResults(): BetaToolResultBlockParam[];
  close(): Promise<void>;
}

/** Starts the stand-in on a free loopback port. */
export async function startScriptedMessagesApi(
  turns: ScriptedTurn[],
  options: { finalText?: string } = {},
): Promise<ScriptedMessagesApi> {
  const requests: ScriptedMessagesApi['requests'] = [];
  let toolUseCounter = 0;

  const server = createServer((request, response) => {
    void handle(request, response);
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method !== 'POST' || url.pathname !== '/v1/messages') {
      sendJson(response, 404, {
        type: 'error',
        error: {
          type: 'not_found_error',
          message: `No route for ${request.method} ${url.pathname}`,
        },
      });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(
      Buffer.concat(chunks).toString('utf8'),
    ) as ScriptedMessagesApi['requests'][number];
    requests.push(body);
    const turn = turns[requests.length - 1];
    const content: BetaMessage['content'] =
      turn === undefined
        ? [{ type: 'text', text: options.finalText ?? 'Memory is up to date.', citations: null }]
        : turn.map((input) => ({
            type: 'tool_use',
            id: `toolu_${String(++toolUseCounter).padStart(4, '0')}`,
            name: 'memory',
            input,
            caller: { type: 'direct' },
          }));
    const message: BetaMessage = {
      id: `msg_${String(requests.length).padStart(4, '0')}`,
      type: 'message',
      role: 'assistant',
      model: 'scripted',
      content,
      container: null,
      context_management: null,
      diagnostics: null,
      stop_details: null,
      stop_reason: turn === undefined ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: {
        cache_creation: null,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        fallback_credit: null,
        inference_geo: null,
        input_tokens: 10,
        iterations: null,
        output_tokens: 10,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: 'standard',
        speed: null,
      },
    };
    sendJson(response, 200, message);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    toolResults() {
      const results: BetaToolResultBlockParam[] = [];
      for (const body of requests) {
        const last = body.messages.at(-1);
        if (last?.role !== 'user' || typeof last.content === 'string') continue;
        for (const block of last.content) {
          if (block.type === 'tool_result') results.push(block);
        }
      }
      return results;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': `req_${Date.now()}`,
  });
  response.end(text);
}
