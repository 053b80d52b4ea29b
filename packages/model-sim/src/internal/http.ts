import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { ApiError, errorBody, shouldRetry } from './api-errors.js';
import { FAULT_MESSAGES } from './faults.js';
import { formatSse, streamEvents } from './message.js';

/** The Messages API's request size limit (32 MB). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function readBody(request: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(
          new ApiError('request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
        );
        // Stop storing, but read the rest so the client gets the 413 instead of a reset.
        request.removeAllListeners('data');
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function destroy(response: ServerResponse): void {
  response.socket?.destroy();
  response.destroy();
}

export function sendJson(
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

export function sendError(response: ServerResponse, error: ApiError, requestId: string): void {
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

/** How a stream ends: whole, cut after the first delta, or with an SSE error event. */
export type StreamMode = 'full' | 'cut' | 'error';

export function sendStream(
  response: ServerResponse,
  message: BetaMessage,
  requestId: string,
  mode: StreamMode,
  errorType = 'overloaded_error',
): void {
  if (response.destroyed) return;
  response.writeHead(200, sseHeaders(requestId));
  const events = streamEvents(message);
  if (mode === 'full') {
    response.end(events.map(formatSse).join(''));
    return;
  }
  if (mode === 'error') {
    // The API reports an error that happens after the 200 (an overload, mostly) as an SSE
    // error event, after the first content has already arrived.
    const text =
      Object.values(FAULT_MESSAGES).find((entry) => entry.type === errorType)?.message ??
      `${errorType} (injected fault).`;
    const body = errorBody(new ApiError(errorType, text), requestId);
    const firstDelta = events.findIndex((event) => event.type === 'content_block_delta');
    const sent = events.slice(0, firstDelta < 0 ? 1 : firstDelta + 1);
    response.end(`${sent.map(formatSse).join('')}event: error\ndata: ${JSON.stringify(body)}\n\n`);
    return;
  }
  // Up to the first delta: the client has a message_start and a started block, then nothing.
  const firstDelta = events.findIndex((event) => event.type === 'content_block_delta');
  const sent = events.slice(0, firstDelta < 0 ? 2 : firstDelta + 1);
  response.write(sent.map(formatSse).join(''), () => destroy(response));
}

/** A stream written one event at a time with a pause between events; `isClosed()` cuts it. */
export async function sendSlowStream(
  response: ServerResponse,
  message: BetaMessage,
  requestId: string,
  pause: () => Promise<void>,
  isClosed: () => boolean,
): Promise<void> {
  if (response.destroyed) return;
  response.writeHead(200, sseHeaders(requestId));
  for (const event of streamEvents(message)) {
    if (isClosed() || response.destroyed) return destroy(response);
    response.write(formatSse(event));
    if (event.type !== 'message_stop') await pause();
  }
  response.end();
}
