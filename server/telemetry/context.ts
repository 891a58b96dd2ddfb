/**
 * Trace context across processes (W3C `traceparent` / `tracestate`): out in headers or an MCP `_meta`, in
 * from headers, kept as a string (an instance's column, a task's field). A no-op while tracing is off.
 */
import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import { tracer, tracing } from './state.js';

/** Node's IncomingHttpHeaders, a fetch Headers, or a plain map such as an MCP request's `_meta`. */
export type Carrier = { get(name: string): string | null } | Record<string, unknown>;

const getter: TextMapGetter<Carrier> = {
  keys: (c) => (typeof c.get === 'function' ? [] : Object.keys(c)),
  get(c, key) {
    if (typeof c.get === 'function') return (c.get as (k: string) => string | null)(key) ?? undefined;
    const v = (c as Record<string, unknown>)[key];
    if (typeof v === 'string') return v;
    return Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  },
};

/** The active span's context as `{ traceparent, tracestate }`; `{}` when off or outside any span. */
export function traceHeaders(): Record<string, string> {
  if (!tracing.on) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Runs `fn` in the trace context a caller sent (its `traceparent`), or a fresh one when it sent none. */
export function continueTrace<T>(carrier: Carrier | null | undefined, fn: () => T): T {
  if (!tracing.on) return fn();
  return context.with(carrier ? propagation.extract(ROOT_CONTEXT, carrier, getter) : ROOT_CONTEXT, fn);
}

/** The context a stored traceparent names (a root context when there is none). */
export function contextOf(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }, getter) : ROOT_CONTEXT;
}

/** The `traceparent` of a span, to store or to hand on. */
export function traceparentOf(span: Span): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent ?? null;
}

/** Does nothing: what the span helpers hand their callers while tracing is off. */
export const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** The span's name and options (its kind and attributes, a SpanOptions). */
export interface SpanSpec {
  name: string;
  kind?: SpanKind;
  attributes?: Attributes;
  /** the parent; default the active context */
  parent?: Context;
  /** which errors mark the span as failed (default: every one) */
  failed?: (e: unknown) => boolean;
}

/** Starts a span the caller ends (not made active); NO_SPAN while tracing is off. */
export function openSpan(spec: Omit<SpanSpec, 'failed'>): Span {
  if (!tracing.on) return NO_SPAN;
  return tracer().startSpan(spec.name, spec, spec.parent ?? context.active());
}

/** Runs `fn` in a new active span ended when it settles; an error `failed` counts marks it failed. */
export async function inSpan<T>(spec: SpanSpec, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!tracing.on) return fn(NO_SPAN);
  const span = openSpan(spec);
  try {
    return await context.with(trace.setSpan(spec.parent ?? context.active(), span), () => fn(span));
  } catch (e) {
    if (spec.failed?.(e) ?? true) markFailed(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/**
 * Sets the span's status to ERROR with `error.type` (the error's code or class). The message only with
 * content capture on: errors quote what they refused (a tool's arguments, a model's answer).
 */
export function markFailed(span: Span, e: unknown, type?: string): void {
  const o = e as { errorType?: unknown; code?: unknown } | null;
  const name = type ?? o?.errorType ?? o?.code ?? (e as Error)?.constructor?.name ?? 'Error';
  span.setAttribute('error.type', String(name));
  const message = tracing.captureContent && e instanceof Error ? e.message.slice(0, 1000) : undefined;
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
