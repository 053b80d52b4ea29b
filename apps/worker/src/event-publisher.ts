import type { ChainEvent } from '@baton/projects';
import type { WorkerMetrics } from './metrics.js';

/** Counts a session's or the worker's event in the metrics (the chain calls it for every event). */
export function countEvent(metrics: WorkerMetrics, event: ChainEvent): void {
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
