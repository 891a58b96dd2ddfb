/** Times and logs the tracked engine commands of each GraphQL mutation (the latency histograms of /metrics). */
import { getOperationAST, Kind, type OperationDefinitionNode, valueFromASTUntyped } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { isUnavailable } from '../errors.js';
import type { Logger } from '../log.js';
import type { EngineMetrics } from '../metrics/index.js';

const TRACKED = new Set([
  'fetchAndLock',
  'journalStep',
  'journalSteps',
  'completeTask',
  'failTask',
  'extendLock',
  'decideApproval',
  'startProcess',
  'cancelProcess',
  'retryTask',
  'resolveIncident',
  'deploy',
]);

/** Ids only: which task, attempt, step, instance, approval a command concerns. */
function idsOf(field: string, args: Record<string, unknown>): Record<string, unknown> {
  const input = (args.input ?? {}) as Record<string, unknown>;
  const pick = (o: Record<string, unknown>, k: string) => (o[k] === undefined ? {} : { [k]: o[k] });
  return {
    ...pick(input, 'taskId'),
    ...pick(input, 'attempt'),
    ...(input.sequence === undefined ? {} : { step: input.sequence }),
    ...pick(input, 'kind'),
    ...pick(input, 'state'),
    ...pick(input, 'workerId'),
    ...pick(input, 'approvalId'),
    ...pick(input, 'decision'),
    ...(field === 'cancelProcess' ? { processInstanceId: args.id } : {}),
    ...(field === 'retryTask' ? { taskId: args.id } : {}),
    ...(field === 'resolveIncident' ? { incidentId: input.id } : {}),
    ...(field === 'startProcess' ? { key: args.key } : {}),
  };
}

/** Times and logs the tracked engine commands of each GraphQL mutation. */
export function observePlugin(metrics: EngineMetrics, log: Logger): Plugin {
  return {
    onExecute({ args }) {
      const op = getOperationAST(args.document, args.operationName) as OperationDefinitionNode | null;
      if (op?.operation !== 'mutation') return;
      const vars = (args.variableValues ?? {}) as Record<string, unknown>;
      const fields = op.selectionSet.selections.flatMap((s) =>
        s.kind === Kind.FIELD && TRACKED.has(s.name.value)
          ? [
              {
                name: s.name.value,
                key: s.alias?.value ?? s.name.value,
                args: Object.fromEntries(
                  (s.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, vars)]),
                ),
              },
            ]
          : [],
      );
      if (!fields.length) return;
      const start = performance.now();
      return {
        onExecuteDone({ result }) {
          const seconds = (performance.now() - start) / 1000;
          const errors = 'errors' in result ? (result.errors ?? []) : [];
          for (const f of fields) {
            const err = errors.find((e) => e.path?.[0] === f.key);
            const code = err ? codeOf(err) : null;
            const ids = idsOf(f.name, f.args);
            const input = (f.args.input ?? {}) as Record<string, unknown>;
            if (f.name === 'fetchAndLock') {
              const longPoll = Number(input.asyncResponseTimeoutMs ?? 0) > 0 ? 'true' : 'false';
              metrics.fetch.observe(seconds, { long_poll: longPoll, outcome: code ? 'error' : 'ok' });
            } else if (f.name === 'journalStep') {
              metrics.journal.observe(seconds, {
                kind: String(input.kind ?? ''),
                state: String(input.state ?? ''),
                outcome: code ? 'error' : 'ok',
              });
            }
            const entry = {
              command: f.name,
              ...ids,
              durationMs: Math.round(seconds * 1000),
              ...(code ? { code } : {}),
            };
            if (code === 'INTERNAL') log.error(entry, 'engine command failed');
            else if (code) log.info(entry, 'engine command refused');
            else if (
              f.name === 'fetchAndLock' ||
              f.name === 'journalStep' ||
              f.name === 'journalSteps' ||
              f.name === 'extendLock'
            )
              log.debug(entry, 'engine command');
            else log.info(entry, 'engine command');
          }
        },
      };
    },
  };
}

function codeOf(err: { extensions?: Record<string, unknown>; originalError?: unknown }): string {
  const original = err.originalError as { code?: unknown; extensions?: { code?: unknown } } | undefined;
  if (isUnavailable(original)) return 'UNAVAILABLE';
  const code = err.extensions?.code ?? original?.extensions?.code ?? original?.code;
  return typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR' ? code : 'INTERNAL';
}
