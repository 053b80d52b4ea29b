import type { SessionJobData } from '@baton/projects';
import type { Job } from 'bullmq';
import { createEventPublisher } from './event-publisher.js';
import { SessionJob, type SessionJobResult, type SessionProcessorOptions } from './session-job.js';

export { sessionBudgets } from './session-results.js';
export type { RunningSession, SessionJobResult, SessionProcessorOptions } from './session-job.js';

/**
 * The BullMQ processor for `baton-sessions`: each job is a `SessionJob`. It declares three
 * parameters because BullMQ only creates the AbortSignal for processors whose `length` is at
 * least 3.
 */
export function createSessionProcessor(options: SessionProcessorOptions) {
  const publish = createEventPublisher(options);
  return async function processSessionJob(
    job: Job<SessionJobData>,
    token: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<SessionJobResult> {
    return await new SessionJob(options, publish, job, token, signal).run();
  };
}
