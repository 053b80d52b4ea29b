import { SessionError } from '../errors.js';
import type { SessionTracing } from './session-spans.js';

/** Tracing exported over OTLP, as `startOtlpTracing` set it up. */
export interface OtlpTracing {
  tracing: SessionTracing;
  /** Where spans are posted (`<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`). */
  url: string;
  /** Ends open sessions' spans, sends what is buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

/** Options of `startOtlpTracing`. */
export interface OtlpTracingOptions {
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** `service.name` of the spans unless `OTEL_SERVICE_NAME` is set, e.g. `baton-worker`. */
  serviceName: string;
}

/**
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` set, loads the OpenTelemetry SDK and an OTLP/HTTP (JSON)
 * exporter and returns a `SessionTracing` that feeds them; without it, `undefined` and nothing is
 * loaded, so a process that does not trace pays nothing. Throws `SessionError('invalid_options')`
 * for an endpoint that is not an http(s) URL.
 */
export async function startOtlpTracing(
  options: OtlpTracingOptions,
): Promise<OtlpTracing | undefined> {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? '';
  if (endpoint === '') return undefined;
  if (!URL.canParse(endpoint) || !/^https?:$/u.test(new URL(endpoint).protocol)) {
    throw new SessionError(
      'invalid_options',
      'OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL',
    );
  }
  // The OTLP endpoint variable names the collector's base; traces go to its /v1/traces.
  const url = `${endpoint.replace(/\/+$/u, '')}/v1/traces`;
  // Loaded here, not at the top: a process without an endpoint never loads OpenTelemetry.
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { createSessionTracing },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('./session-spans.js'),
  ]);
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || options.serviceName;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const tracing = createSessionTracing({ tracer: provider.getTracer('@baton/session') });
  return {
    tracing,
    url,
    async shutdown() {
      tracing.endAll();
      await provider.shutdown();
    },
  };
}
