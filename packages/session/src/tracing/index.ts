// `@baton/session/tracing`: OpenTelemetry spans from session events. A separate entry point, so
// that nothing of OpenTelemetry is loaded by a process that does not trace.
export { createSessionTracing } from './session-spans.js';
export type { SessionTracing, SessionTracingOptions } from './session-spans.js';
export { BATON as BATON_SPAN_ATTRIBUTES, GEN_AI as GEN_AI_ATTRIBUTES } from './attributes.js';
