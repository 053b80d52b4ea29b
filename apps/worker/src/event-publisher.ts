import type { TurnUsage } from '@baton/context-config';
import type { ProjectRepository, WorkerEvent } from '@baton/projects';
import type { Logger } from 'pino';
import type { WorkerMetrics } from './metrics.js';
import type { WorkerSessionEvent } from './session-runner.js';

/** Publishes a session's or the worker's event to the project's stream. Never throws. */
export type PublishEvent = (event: WorkerSessionEvent | WorkerEvent) => Promise<void>;

/**
 * The publisher every job of a worker shares: counts the event in the metrics, records an
 * acknowledged checkpoint on the project, and appends the event to the project's stream.
 */
export function createEventPublisher(options: {
  repository: ProjectRepository;
  logger: Logger;
  metrics?: WorkerMetrics | undefined;
}): PublishEvent {
  const { repository, logger } = options;
  return async (event) => {
    const metrics = options.metrics;
    if (metrics) countEvent(metrics, event);
    try {
      if (event.type === 'checkpoint' && event.pushed && event.head !== null) {
        // Acknowledged: the next session, on whichever worker, starts from this commit.
        await repository.setLastCheckpoint(event.projectId, event.head);
      }
      await repository.appendEvent(event.projectId, event);
    } catch (error) {
      // Events are for observers; a failed XADD must not fail the session.
      logger.warn(
        { projectId: event.projectId, type: event.type, err: error },
        'could not publish event',
      );
    }
  };
}

function countEvent(metrics: WorkerMetrics, event: WorkerSessionEvent | WorkerEvent): void {
  const data = event as unknown as Record<string, unknown>;
  if (event.type === 'turn') {
    const usage = data.usage as Partial<TurnUsage> | undefined;
    metrics.inputTokens.inc(usage?.inputTokens ?? 0);
    metrics.outputTokens.inc(usage?.outputTokens ?? 0);
    metrics.cacheReadInputTokens.inc(usage?.cacheReadInputTokens ?? 0);
    metrics.cacheWriteInputTokens.inc({ ttl: '5m' }, usage?.cacheWrite5mInputTokens ?? 0);
    metrics.cacheWriteInputTokens.inc({ ttl: '1h' }, usage?.cacheWrite1hInputTokens ?? 0);
    const cleared = data.clearedInputTokens;
    if (typeof cleared === 'number' && cleared > 0) metrics.clearedInputTokens.inc(cleared);
  } else if (event.type === 'tool-call' && data.isError === true) {
    metrics.toolErrors.inc({ tool: typeof data.tool === 'string' ? data.tool : 'unknown' });
  } else if (event.type === 'model-fallback') {
    metrics.modelFallbacks.inc({ from: String(data.from), to: String(data.to) });
  } else if (event.type === 'api-retry') {
    metrics.apiRetries.inc({
      status: typeof data.status === 'number' ? String(data.status) : 'network',
    });
  }
}
