import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver got it: raw body bytes, before any parsing. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The status the receiver answered. */
  answered: number;
}

/** A local webhook receiver on 127.0.0.1: answers the first `failFirst` requests 500, then `status`. */
export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  received(count: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export interface WebhookReceiverOptions {
  /** Requests answered 500 before the receiver starts answering `status`. Default 0. */
  failFirst?: number;
  /** The answer once `failFirst` requests failed. Default 204. */
  status?: number;
}

export async function startWebhookReceiver(
  options: WebhookReceiverOptions = {},
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ count: number; resolve: (value: ReceivedRequest[]) => void }> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const failing = requests.length < (options.failFirst ?? 0);
      const answered = failing ? 500 : (options.status ?? 204);
      requests.push({
        path: request.url ?? '',
        headers: request.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        answered,
      });
      response.writeHead(answered).end();
      for (const waiter of waiters.filter((entry) => requests.length >= entry.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve([...requests]);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/secret-path-token`,
    requests,
    received(count) {
      if (requests.length >= count) return Promise.resolve([...requests]);
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
