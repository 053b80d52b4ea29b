import { Redis } from 'ioredis';

/** One command on a fresh connection, failing at once (no retries) if nothing answers. */
export async function redisCommand(url: string, name: string, ...args: string[]): Promise<unknown> {
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    return await client.call(name, ...args);
  } finally {
    client.disconnect();
  }
}
