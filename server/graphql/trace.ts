/**
 * GraphQL requests in traces (docs/tracing.md): each operation runs in the trace context its caller sent
 * (`traceparent`: the worker sends its attempt's), and each engine command of a mutation is a SERVER span
 * named after it (`abada journalSteps`), with ids and the refusal's code. fetchAndLock is left to the
 * engine's `claim` spans, which land in each claimed instance's trace instead of one per long poll.
 * Nothing at all while tracing is off.
 */
import { SpanKind, type Span } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import { ABADA, continueTrace, markFailed, openSpan, tracingOn } from '../telemetry/index.js';
import { commandFields, commandIds } from './commands.js';

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
    instrumentation: {
      operation: ({ request }, wrapped) => continueTrace(request?.headers, wrapped),
    },
    onExecute({ args }) {
      const spans: { key: string; span: Span }[] = [];
      // fetchAndLock: the claim spans, in each claimed instance's trace (see above)
      for (const f of commandFields(args)) {
        if (f.name === 'fetchAndLock') continue;
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
          for (const { key, span } of spans) {
            const err = errors.find((e) => e.path?.[0] === key);
            if (err) {
              const code = err.extensions?.code ?? 'INTERNAL';
              span.setAttribute(ABADA.code, String(code));
              markFailed(span, err, String(code));
            }
            span.end();
          }
        },
      };
    },
  };
}
