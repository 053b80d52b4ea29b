/** The namespace's change feed (a capped stream) and the expiry sweep that writes to it. */
import type { RedisClient } from '../redis-connection.js';
import type { ReadChangesOptions, SweepOptions, SweepResult } from '../memory-store-options.js';
import { parseChange, type RedisMemoryChange } from './records.js';
import { toStoreError } from './status.js';

/** Change-feed entries after `options.after`, oldest first. */
export async function readChanges(
  client: RedisClient,
  feedKey: string,
  options: ReadChangesOptions,
): Promise<RedisMemoryChange[]> {
  try {
    const start = options.after === undefined ? '-' : `(${options.after}`;
    const entries = await client.xrange(feedKey, start, '+', 'COUNT', options.count ?? 100);
    return entries.map(([id, fields]) => parseChange(id, fields));
  } catch (error) {
    throw toStoreError(error, 'read the change feed');
  }
}

/**
 * Runs `sweepBatch` (the sweep script's last arguments: age, batch size, feed length, cut-off)
 * until a batch removes fewer paths than it may: the namespace then holds no expired file.
 */
export async function sweepInBatches(
  options: SweepOptions & { feedMaxLength: number },
  sweepBatch: (batchArguments: string[]) => Promise<string[]>,
): Promise<SweepResult> {
  if ((options.olderThanMs === undefined) === (options.accessedBefore === undefined)) {
    throw new TypeError('sweepExpired needs exactly one of olderThanMs and accessedBefore.');
  }
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 500));
  const batchArguments = [
    String(Math.max(0, Math.floor(options.olderThanMs ?? 0))),
    String(batchSize),
    String(options.feedMaxLength),
    options.accessedBefore === undefined ? '' : String(Math.floor(options.accessedBefore)),
  ];
  const removed: string[] = [];
  for (;;) {
    const paths = await sweepBatch(batchArguments);
    removed.push(...paths);
    if (paths.length < batchSize) {
      return { removed };
    }
  }
}
