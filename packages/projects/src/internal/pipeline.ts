import type { RedisClient } from '@baton/storage-redis';
import { defineScripts, type ScriptCommands } from './scripts.js';

/** What `execPipeline` needs of a pipeline (ioredis's `ChainableCommander`). */
export interface PipelineLike {
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** A pipeline that knows the project domain's Lua scripts as chainable commands. */
export type ScriptPipeline = ReturnType<RedisClient['pipeline']> & ScriptCommands;

/** Pipelines resolve with per-command errors instead of rejecting: the first one is thrown. */
export async function execPipeline(pipeline: PipelineLike): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, reply]) => reply);
}

/**
 * A pipeline on `redis` that queues the scripts too. ioredis adds `defineCommand` scripts to
 * pipelines at run time, which its types cannot say: this is the one place that asserts it.
 */
export function scriptPipeline(redis: RedisClient): ScriptPipeline {
  return defineScripts(redis).pipeline() as ScriptPipeline;
}
