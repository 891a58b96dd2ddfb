/**
 * The engine commands of a mutation as observe.ts (latency, logs) and trace.ts (spans) read them: the
 * command fields, their arguments with variables filled in, and the ids a command concerns, never payloads.
 */
import { type ExecutionArgs, getOperationAST, Kind, valueFromASTUntyped } from 'graphql';
import { isUnavailable } from '../errors.js';

export const COMMANDS: ReadonlySet<string> = new Set([
  'fetchAndLock',
  'journalStep',
  'journalSteps',
  'journalBatch',
  'completeTask',
  'failTask',
  'extendLock',
  'decideApproval',
  'revokeApproval',
  'startProcess',
  'cancelProcess',
  'retryTask',
  'resolveIncident',
  'deploy',
]);

/** The command fields of a mutation (none for a query or a subscription); `key`: its alias, else its name. */
export function commandFields({ document, operationName, variableValues }: ExecutionArgs) {
  const op = getOperationAST(document, operationName);
  if (op?.operation !== 'mutation') return [];
  return op.selectionSet.selections.flatMap((s) =>
    s.kind === Kind.FIELD && COMMANDS.has(s.name.value)
      ? [
          {
            name: s.name.value,
            key: s.alias?.value ?? s.name.value,
            args: Object.fromEntries(
              (s.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variableValues)]),
            ),
          },
        ]
      : [],
  );
}

/** Ids only: which task, attempt, step, instance, approval a command concerns. */
export function commandIds(field: string, args: Record<string, unknown>): Record<string, unknown> {
  const input = (args.input ?? {}) as Record<string, unknown>;
  const pick = (o: Record<string, unknown>, k: string) => (o[k] === undefined ? {} : { [k]: o[k] });
  return {
    ...pick(input, 'taskId'),
    ...pick(input, 'attempt'),
    ...(input.sequence === undefined ? {} : { step: input.sequence }),
    ...pick(input, 'kind'),
    ...pick(input, 'state'),
    ...pick(input, 'workerId'),
    ...(field === 'journalBatch' && Array.isArray(input.entries)
      ? { taskIds: input.entries.map((e) => (e as { taskId?: unknown }).taskId) }
      : {}),
    ...pick(input, 'approvalId'),
    ...pick(input, 'decision'),
    ...(field === 'cancelProcess' ? { processInstanceId: args.id } : {}),
    ...(field === 'retryTask' ? { taskId: args.id } : {}),
    ...(field === 'resolveIncident' ? { incidentId: input.id } : {}),
    ...(field === 'startProcess' ? { key: args.key } : {}),
  };
}

/** The SPEC §9 code of a command's error as execution left it (before the response masks it). */
export function codeOf(err: { extensions?: Record<string, unknown>; originalError?: unknown }): string {
  const original = err.originalError as { code?: unknown; extensions?: { code?: unknown } } | undefined;
  if (isUnavailable(original)) return 'UNAVAILABLE';
  const code = err.extensions?.code ?? original?.extensions?.code ?? original?.code;
  return typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR' ? code : 'INTERNAL';
}
