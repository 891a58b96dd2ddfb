/**
 * A pino `mixin` adding `trace_id` and `span_id` (the OpenTelemetry pino instrumentation's names, which
 * log backends link to traces) to every line written inside a span; nothing while tracing is off.
 */
import { context, trace } from '@opentelemetry/api';
import { tracing } from './state.js';

export function traceLogFields(): Record<string, string> {
  if (!tracing.on) return {};
  const sc = trace.getSpanContext(context.active());
  if (!sc || !trace.isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}
