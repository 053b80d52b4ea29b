import type { RedisClient } from '@baton/storage-redis';
import type { ChainableCommander } from 'ioredis';
import { scripts } from './scripts.js';

/** What `execPipeline` needs of a pipeline (ioredis's `ChainableCommander`). */
export interface PipelineLike {
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** A pipeline that can queue the project domain's Lua scripts (`scripts.queue`). */
export type ScriptPipeline = ChainableCommander;

/** Pipelines resolve with per-command errors instead of rejecting: the first one is thrown. */
export async function execPipeline(pipeline: PipelineLike): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, reply]) => reply);
}

/** A pipeline on `redis` that can queue the scripts too (with `scripts.queue`). */
export function scriptPipeline(redis: RedisClient): ScriptPipeline {
  return scripts.pipeline(redis);
}
