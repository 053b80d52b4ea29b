/** A minimal Server-Sent Events client over fetch, for tests: parses frames as they arrive. */
export interface SseMessage {
  event: string;
  data: unknown;
  id: string | undefined;
}

export interface SseConnection {
  messages: SseMessage[];
  /** Resolves with the first message (from the start of the connection) matching `predicate`. */
  next(predicate: (message: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  close(): void;
}

export async function connectSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  if (!response.ok || response.body === null) {
    throw new Error(`SSE connect failed: HTTP ${response.status} ${await response.text()}`);
  }
  const messages: SseMessage[] = [];
  const waiters = new Set<() => void>();
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body.getReader();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          let id: string | undefined;
          const data: string[] = [];
          for (const line of frame.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length === 0) continue;
          messages.push({ event, id, data: JSON.parse(data.join('\n')) as unknown });
          for (const waiter of waiters) waiter();
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    messages,
    next(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(predicate);
          if (found === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching SSE message within ${timeoutMs} ms; got ${messages.map((message) => message.event).join(', ')}`,
            ),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    close() {
      controller.abort();
    },
  };
}
