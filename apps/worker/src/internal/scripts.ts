import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** Any ioredis client we accept: a single node or a Cluster. */
export type RedisClient = Redis | Cluster;

/** A Lua script with its SHA1, so it runs with EVALSHA and falls back to EVAL once per server. */
export interface LuaScript {
  name: string;
  source: string;
  sha: string;
  keys: number;
}

export function defineScript(name: string, keys: number, source: string): LuaScript {
  return { name, keys, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Runs a script; a restarted or failed-over Redis forgets scripts, so NOSCRIPT reloads it. */
export async function runScript(
  redis: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  if (keys.length !== script.keys) {
    throw new Error(`script ${script.name} takes ${script.keys} keys, got ${keys.length}`);
  }
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (error instanceof Error && error.message.includes('NOSCRIPT')) {
      return await redis.eval(script.source, keys.length, ...keys, ...args);
    }
    throw error;
  }
}
