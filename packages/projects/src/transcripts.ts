/**
 * A project's session transcripts in Redis (the worker's `TranscriptSink`, and what `baton
 * transcript`, `baton search` and the dashboard read). One list per session of JSON records (a
 * header, one entry per message, an end) and a sorted set indexing them by start time; both
 * under the project's keys, so they share its hash tag, are capped like its other lists and go
 * when the project is deleted.
 */
import {
  TRANSCRIPT_SESSIONS_KEPT,
  isTranscriptSessionId,
  summarizeTranscript,
  transcriptFromRecords,
  type TranscriptRecord,
  type TranscriptStore,
  type TranscriptSummary,
} from '@baton/session';
import { ProjectError } from './errors.js';
import type { BatonKeys } from './keys.js';
import type { RedisClient } from '@baton/storage-redis';
import { execPipeline } from './internal/pipeline.js';
import { writeBatch, type ProjectFence } from './internal/write-batch.js';

/** Options of `createRedisTranscripts`. */
export interface RedisTranscriptsOptions {
  redis: RedisClient;
  keys: BatonKeys;
  projectId: string;
  /** Transcripts kept per project; starting one more removes the oldest. Default `TRANSCRIPT_SESSIONS_KEPT`. */
  keep?: number;
  /**
   * The writing session's lease (a worker's sessions): every write is applied only while the
   * lease holds this token, so a session that lost the project adds nothing to its transcripts
   * (`ProjectError('fenced')`). Default: unfenced.
   */
  fence?: ProjectFence | undefined;
}

export function createRedisTranscripts(options: RedisTranscriptsOptions): TranscriptStore {
  const { redis, keys, projectId, fence } = options;
  const keep = options.keep ?? TRANSCRIPT_SESSIONS_KEPT;
  const index = keys.transcripts(projectId);
  const key = (sessionId: string) => keys.transcript(projectId, sessionId);
  const batch = () => writeBatch(redis, keys, projectId, fence);

  async function push(sessionId: string, records: readonly TranscriptRecord[]): Promise<void> {
    if (records.length === 0) return;
    const writes = batch();
    for (const record of records) writes.rpush(key(sessionId), JSON.stringify(record));
    await writes.exec();
  }

  return {
    async start(header) {
      if (!isTranscriptSessionId(header.sessionId)) {
        throw new ProjectError(
          'invalid_input',
          `invalid session id ${JSON.stringify(header.sessionId)}`,
        );
      }
      const writes = batch();
      writes.del(key(header.sessionId));
      writes.rpush(key(header.sessionId), JSON.stringify({ type: 'header', ...header }));
      writes.zadd(index, header.startedAt, header.sessionId);
      await writes.exec();
      // The oldest beyond `keep` go, list and index entry together.
      const excess = (await redis.zcard(index)) - keep;
      if (excess <= 0) return;
      const old = await redis.zrange(index, '0', String(excess - 1));
      if (old.length === 0) return;
      const trim = batch();
      trim.del(...old.map(key));
      trim.zrem(index, ...old);
      await trim.exec();
    },
    append: (sessionId, messages) =>
      push(
        sessionId,
        messages.map((message) => ({ type: 'message' as const, ...message })),
      ),
    end: (sessionId, end) => push(sessionId, [{ type: 'end', ...end }]),
    async list() {
      const ids = await redis.zrange(index, '0', '-1');
      const summaries: TranscriptSummary[] = [];
      // Header, length and last record per session: a listing never reads the messages.
      for (let start = 0; start < ids.length; start += 100) {
        const batch = ids.slice(start, start + 100);
        const pipeline = redis.pipeline();
        for (const id of batch) {
          pipeline.lindex(key(id), 0);
          pipeline.llen(key(id));
          pipeline.lindex(key(id), -1);
        }
        const replies = await execPipeline(pipeline);
        for (let position = 0; position < batch.length; position += 1) {
          const [header, length, last] = replies.slice(position * 3, position * 3 + 3) as [
            string | null,
            number,
            string | null,
          ];
          if (header === null) continue;
          const records = last !== null && length > 1 ? [header, last] : [header];
          const transcript = transcriptFromRecords(records);
          if (transcript === null) continue;
          const summary = summarizeTranscript(transcript);
          summaries.push({
            ...summary,
            messageCount: Math.max(0, length - 1 - (transcript.end === null ? 0 : 1)),
          });
        }
      }
      return summaries;
    },
    async read(sessionId) {
      if (!isTranscriptSessionId(sessionId)) return null;
      return transcriptFromRecords(await redis.lrange(key(sessionId), 0, -1));
    },
  };
}

/** Removes every transcript of a project (its deletion). */
export async function deleteTranscripts(
  redis: RedisClient,
  keys: BatonKeys,
  projectId: string,
): Promise<void> {
  const index = keys.transcripts(projectId);
  const ids = await redis.zrange(index, '0', '-1');
  for (let start = 0; start < ids.length; start += 500) {
    await redis.del(...ids.slice(start, start + 500).map((id) => keys.transcript(projectId, id)));
  }
  await redis.del(index);
}
