/**
 * GraphQL requests in traces (docs/tracing.md): each operation runs in the trace context its caller sent
 * (`traceparent`: the worker sends its attempt's), and each engine command of a mutation is a SERVER span
 * named after it (`abada journalSteps`), with ids and the refusal's code. fetchAndLock is left to the
 * engine's `claim` spans, which land in each claimed instance's trace instead of one per long poll.
 * Nothing at all while tracing is off.
 */
import { SpanKind, type Span } from '@opentelemetry/api';
import { getOperationAST, Kind, type OperationDefinitionNode, valueFromASTUntyped } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ABADA, continueTrace, markFailed, openSpan, tracingOn } from '../telemetry/index.js';

const COMMANDS = new Set([
  'journalStep',
  'journalSteps',
  'completeTask',
  'failTask',
  'extendLock',
  'decideApproval',
  'revokeApproval',
  'startProcess',
  'cancelProcess',
  'retryTask',
  'resolveIncident',
]);

/** Ids only, never payloads. */
function attributesOf(args: Record<string, unknown>): Record<string, string | number> {
  const input = (args.input ?? {}) as Record<string, unknown>;
  const out: Record<string, string | number> = {};
  const put = (name: string, v: unknown) => {
    if (typeof v === 'string' || typeof v === 'number') out[name] = v;
  };
  put(ABADA.taskId, input.taskId ?? args.taskId);
  put(ABADA.attempt, input.attempt);
  put(ABADA.sequence, input.sequence);
  put(ABADA.stepKind, input.kind);
  put(ABADA.stepState, input.state);
  put(ABADA.workerId, input.workerId ?? args.workerId);
  put(ABADA.approvalId, input.approvalId);
  put(ABADA.decision, input.decision);
  return out;
}

export function tracePlugin(): Plugin {
  if (!tracingOn()) return {};
  return {
    instrumentation: {
      operation: ({ request }, wrapped) => continueTrace(request?.headers, wrapped),
    },
    onExecute({ args }) {
      const op = getOperationAST(args.document, args.operationName) as OperationDefinitionNode | null;
      if (op?.operation !== 'mutation') return;
      const vars = (args.variableValues ?? {}) as Record<string, unknown>;
      const spans: { key: string; span: Span }[] = [];
      for (const s of op.selectionSet.selections) {
        if (s.kind !== Kind.FIELD || !COMMANDS.has(s.name.value)) continue;
        const fieldArgs = Object.fromEntries(
          (s.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, vars)]),
        );
        const span = openSpan({
          name: `abada ${s.name.value}`,
          kind: SpanKind.SERVER,
          attributes: { [ABADA.command]: s.name.value, ...attributesOf(fieldArgs) },
        });
        spans.push({ key: s.alias?.value ?? s.name.value, span });
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
