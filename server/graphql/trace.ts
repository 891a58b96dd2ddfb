/**
 * GraphQL requests in traces (docs/tracing.md): each operation runs in the trace context its caller sent
 * (the worker sends its attempt's), and each engine command of a mutation is a SERVER span named after it
 * (`abada journalSteps`) with ids and the refusal's code. fetchAndLock is left to the engine's `claim`
 * spans, in each claimed instance's trace rather than one per long poll. A journalBatch is one span per
 * entry, in the trace its entry names, named after the call it stands for, so a trace shows a task's
 * journal calls whether or not its worker batched them. Nothing at all while tracing is off.
 */
import { SpanKind, type Span } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import { ABADA, contextOf, continueTrace, markFailed, openSpan, tracingOn } from '../telemetry/index.js';
import { codeOf, commandFields, commandIds } from './commands.js';

/** The span attributes of a command: its ids (commands.ts), never its payloads. */
function attributesOf(field: string, args: Record<string, unknown>): Record<string, string | number> {
  const ids = commandIds(field, args);
  const out: Record<string, string | number> = {};
  const put = (name: string, v: unknown) => {
    if (typeof v === 'string' || typeof v === 'number') out[name] = v;
  };
  put(ABADA.taskId, ids.taskId);
  put(ABADA.attempt, ids.attempt);
  put(ABADA.sequence, ids.step);
  put(ABADA.stepKind, ids.kind);
  put(ABADA.stepState, ids.state);
  put(ABADA.workerId, ids.workerId);
  put(ABADA.approvalId, ids.approvalId);
  put(ABADA.decision, ids.decision);
  return out;
}

export function tracePlugin(): Plugin {
  if (!tracingOn()) return {};
  return {
    instrumentation: { operation: ({ request }, wrapped) => continueTrace(request?.headers, wrapped) },
    onExecute({ args }) {
      const spans: { key: string; entry?: number; span: Span }[] = [];
      for (const f of commandFields(args)) {
        if (f.name === 'fetchAndLock') continue;
        if (f.name === 'journalBatch') {
          spans.push(...entrySpans(f.key, f.args));
          continue;
        }
        const span = openSpan({
          name: `abada ${f.name}`,
          kind: SpanKind.SERVER,
          attributes: { [ABADA.command]: f.name, ...attributesOf(f.name, f.args) },
        });
        spans.push({ key: f.key, span });
      }
      if (!spans.length) return;
      return {
        onExecuteDone({ result }) {
          const errors = 'errors' in result ? (result.errors ?? []) : [];
          for (const { key, entry, span } of spans) {
            const err = errors.find(
              (e) => e.path?.[0] === key && (entry === undefined || e.path.length < 2 || e.path[1] === entry),
            );
            if (err) {
              const code = codeOf(err);
              span.setAttribute(ABADA.code, code);
              markFailed(span, err, code);
            }
            span.end();
          }
        },
      };
    },
  };
}

/** One span per journalBatch entry, in the entry's own trace, named after the call it stands for. */
function entrySpans(key: string, args: Record<string, unknown>) {
  const input = (args.input ?? {}) as { workerId?: unknown; entries?: unknown };
  if (!Array.isArray(input.entries)) return [];
  return input.entries.map((raw, entry) => {
    const e = (raw ?? {}) as { taskId?: unknown; attempt?: unknown; steps?: unknown; traceparent?: unknown };
    const steps = Array.isArray(e.steps) ? e.steps : [];
    const name = steps.length === 1 ? 'journalStep' : 'journalSteps';
    const attributes: Record<string, string | number> = { [ABADA.command]: name };
    if (typeof e.taskId === 'string') attributes[ABADA.taskId] = e.taskId;
    if (typeof e.attempt === 'number') attributes[ABADA.attempt] = e.attempt;
    if (typeof input.workerId === 'string') attributes[ABADA.workerId] = input.workerId;
    const span = openSpan({
      name: `abada ${name}`,
      kind: SpanKind.SERVER,
      attributes,
      // an entry without its own trace context stays in the request's
      ...(typeof e.traceparent === 'string' ? { parent: contextOf(e.traceparent) } : {}),
    });
    return { key, entry, span };
  });
}
