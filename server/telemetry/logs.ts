/**
 * Trace ids in the JSON logs: a pino `mixin` adding `trace_id` and `span_id` (the names the
 * OpenTelemetry pino instrumentation uses, which log backends link to traces) to every line written
 * inside a span. Nothing is added, and nothing is looked up, while tracing is off.
 */
import { context, trace } from '@opentelemetry/api';
import { tracing } from './state.js';

export function traceLogFields(): Record<string, string> {
  if (!tracing.on) return {};
  const sc = trace.getSpanContext(context.active());
  if (!sc || !trace.isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}
