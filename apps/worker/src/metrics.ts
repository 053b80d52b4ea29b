import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface WorkerMetrics {
  registry: Registry;
  sessions: Counter<'outcome'>;
  activeSessions: Gauge;
  queueJobs: Gauge<'state'>;
  inputTokens: Counter;
  cacheReadInputTokens: Counter;
  cacheWriteInputTokens: Counter<'ttl'>;
  outputTokens: Counter;
  clearedInputTokens: Counter;
  toolErrors: Counter<'tool'>;
  apiRetries: Counter<'status'>;
  modelFallbacks: Counter<'from' | 'to'>;
  interruptions: Counter;
  costUsd: Counter;
}

/**
 * One registry per worker (never the global one, so several workers in one test process do not
 * collide). `collectQueueCounts` runs on each scrape so queue depth is never stale.
 */
export function createWorkerMetrics(options: {
  collectQueueCounts?: () => Promise<Record<string, number>>;
  defaultMetrics?: boolean;
}): WorkerMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false)
    collectDefaultMetrics({ register: registry, prefix: 'baton_' });
  const collect = options.collectQueueCounts;
  return {
    registry,
    sessions: new Counter({
      name: 'baton_sessions_total',
      help: 'Sessions finished by this worker, by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    activeSessions: new Gauge({
      name: 'baton_active_sessions',
      help: 'Sessions running in this worker now.',
      registers: [registry],
    }),
    queueJobs: new Gauge({
      name: 'baton_queue_jobs',
      help: 'Jobs on the baton-sessions queue, by state.',
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        if (!collect) return;
        try {
          const counts = await collect();
          for (const [state, value] of Object.entries(counts)) this.set({ state }, value);
        } catch {
          // A scrape during a Redis outage still returns the other metrics.
        }
      },
    }),
    inputTokens: new Counter({
      name: 'baton_model_input_tokens_total',
      help: 'Uncached input tokens reported by the model (after context editing; the API input_tokens).',
      registers: [registry],
    }),
    cacheReadInputTokens: new Counter({
      name: 'baton_model_cache_read_input_tokens_total',
      help: 'Input tokens read from the prompt cache (billed at 0.1x input).',
      registers: [registry],
    }),
    cacheWriteInputTokens: new Counter({
      name: 'baton_model_cache_write_input_tokens_total',
      help: 'Input tokens written to the prompt cache, by TTL (5m at 1.25x input, 1h at 2x).',
      labelNames: ['ttl'],
      registers: [registry],
    }),
    outputTokens: new Counter({
      name: 'baton_model_output_tokens_total',
      help: 'Output tokens reported by the model.',
      registers: [registry],
    }),
    clearedInputTokens: new Counter({
      name: 'baton_cleared_input_tokens_total',
      help: 'Input tokens removed by context editing.',
      registers: [registry],
    }),
    toolErrors: new Counter({
      name: 'baton_tool_errors_total',
      help: 'Tool calls that returned an error to the model.',
      labelNames: ['tool'],
      registers: [registry],
    }),
    apiRetries: new Counter({
      name: 'baton_api_retries_total',
      help: 'Model API requests retried (429, 529, 5xx, network).',
      labelNames: ['status'],
      registers: [registry],
    }),
    modelFallbacks: new Counter({
      name: 'baton_model_fallbacks_total',
      help: 'Sessions that moved to their fallback model because their model stayed overloaded.',
      labelNames: ['from', 'to'],
      registers: [registry],
    }),
    interruptions: new Counter({
      name: 'baton_session_interruptions_total',
      help: 'Sessions found interrupted by a crash and resumed here.',
      registers: [registry],
    }),
    costUsd: new Counter({
      name: 'baton_cost_usd_total',
      help: 'Estimated model spend in USD.',
      registers: [registry],
    }),
  };
}
