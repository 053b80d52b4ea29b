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
  switch (event.type) {
    case 'turn': {
      const usage = event.usage;
      metrics.inputTokens.inc(usage.inputTokens);
      metrics.outputTokens.inc(usage.outputTokens);
      metrics.cacheReadInputTokens.inc(usage.cacheReadInputTokens);
      metrics.cacheWriteInputTokens.inc({ ttl: '5m' }, usage.cacheWrite5mInputTokens);
      metrics.cacheWriteInputTokens.inc({ ttl: '1h' }, usage.cacheWrite1hInputTokens);
      if (event.clearedInputTokens > 0) metrics.clearedInputTokens.inc(event.clearedInputTokens);
      return;
    }
    case 'tool-call':
      if (event.isError) metrics.toolErrors.inc({ tool: event.tool });
      return;
    case 'model-fallback':
      metrics.modelFallbacks.inc({ from: event.from, to: event.to });
      return;
    case 'api-retry':
      metrics.apiRetries.inc({
        status: event.status === undefined ? 'network' : String(event.status),
      });
      return;
    default:
      return;
  }
}
