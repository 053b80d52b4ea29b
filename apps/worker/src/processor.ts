import { createSessionChain, type SessionJobData } from '@baton/projects';
import type { Job } from 'bullmq';
import { countEvent } from './event-publisher.js';
import { SessionJob, type SessionJobResult, type SessionProcessorOptions } from './session-job.js';

export { sessionBudgets } from '@baton/projects';
export type { RunningSession, SessionJobResult, SessionProcessorOptions } from './session-job.js';

/**
 * The BullMQ processor for `baton-sessions`: each job is a `SessionJob` around one step of the
 * session chain `baton run` also runs. It declares three parameters because BullMQ only creates
 * the AbortSignal for processors whose `length` is at least 3.
 */
export function createSessionProcessor(options: SessionProcessorOptions) {
  const { metrics, observeEvent } = options;
  const chain = createSessionChain({
    log: options.repository,
    runSession: options.runSession,
    client: options.client,
    workerId: options.workerId,
    home: options.home,
    chainDelayMs: options.chainDelayMs,
    retryDelayMs: options.retryDelayMs,
    maxConsecutiveFailures: options.maxConsecutiveFailures,
    defaultModel: options.defaultModel,
    defaultFallbackModel: options.defaultFallbackModel,
    push: options.push,
    maxFileBytes: options.maxFileBytes,
    memorySnapshots: options.memorySnapshots,
    checkpointIntervalMs: options.checkpointIntervalMs,
    logger: options.logger,
    observeEvent: metrics === undefined ? undefined : (event) => countEvent(metrics, event),
    observeSessionEvent: observeEvent,
  });
  return async function processSessionJob(
    job: Job<SessionJobData>,
    token: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<SessionJobResult> {
    return await new SessionJob(options, chain, job, token, signal).run();
  };
}
