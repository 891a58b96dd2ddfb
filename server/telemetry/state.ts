/**
 * The process's tracing state. `tracing.on` is false until sdk.ts registers a provider, and every helper
 * of this folder checks it first, so code paths cost one property read when tracing is off.
 */
import { type Tracer, trace } from '@opentelemetry/api';

export const tracing = {
  on: false,
  captureContent: false,
  /** Only read when `on`: the global provider's tracer for Abada's spans. */
  tracer: null as Tracer | null,
};

export function tracer(): Tracer {
  tracing.tracer ??= trace.getTracer('abada');
  return tracing.tracer;
}
