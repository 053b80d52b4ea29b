import type { RedisClient } from '../redis-connection.js';
import { stagedBody } from './records.js';
import { scripts } from './scripts.js';

/**
 * Largest reverse delta sent to the write script, in UTF-16 code units. A script argument costs
 * Redis far more per byte than a plain command (a 100 KB one costs more than the whole write), so
 * a bigger delta (a rewrite rather than an edit) is not sent: the script keeps the old version
 * whole by renaming its hash instead.
 */
export const MAX_DELTA_SENT = 4_096;

/** Content from which a write stages its body in a key of its own (see `sendWrite`). */
const STAGED_FROM_CHARS = 32 * 1024;

/**
 * Expiry of a write's stage key. The write script runs right behind the SETEX and renames or
 * deletes it; the expiry only cleans up if the script never ran (a connection lost between the
 * two, a script error).
 */
const STAGE_TTL_SECONDS = 60;

/**
 * Sends a write in one round trip. Content below `STAGED_FROM_CHARS` is the script's last
 * argument. Larger content is SETEX'd, behind a blank header, into this write's own stage key,
 * sent right before the script, which writes the version into the header and renames the stage
 * to the body: a Lua argument costs Redis about 1.2 us per KB (120 us at 100 KB, more than the
 * write itself), a plain command argument next to nothing (docs/benchmarks/redis.md).
 *
 * The script is sent by its SHA. If Redis does not know it (SCRIPT FLUSH, a new node) it did not
 * run (a stage is still there), so it is sent again, once, with its source.
 */
export async function sendWrite(
  client: RedisClient,
  content: string,
  keys: string[],
  args: string[],
): Promise<unknown[]> {
  const script = scripts.script('write');
  const staged = content.length >= STAGED_FROM_CHARS;
  const scriptArgs = staged ? args : [...args, content];
  // The SETEX and the script are both written to the connection before either answer arrives,
  // in this order (one round trip); not as a pipeline object, which copies the body once more.
  const staging = staged
    ? client.setex(keys[3] ?? '', STAGE_TTL_SECONDS, stagedBody(content)).then(
        () => undefined,
        (error: unknown) => error,
      )
    : undefined;
  const [error, reply] = await client.evalsha(script.sha, keys.length, ...keys, ...scriptArgs).then(
    (answer): [null, unknown] => [null, answer],
    (failure: Error): [Error, undefined] => [failure, undefined],
  );
  const stagingError = await staging;
  if (stagingError !== undefined) {
    throw stagingError;
  }
  if (!error) {
    return reply as unknown[];
  }
  if (!error.message.startsWith('NOSCRIPT')) {
    throw error;
  }
  return (await client.eval(script.lua, keys.length, ...keys, ...scriptArgs)) as unknown[];
}
