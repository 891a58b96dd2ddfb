/**
 * The completion's own statements, each prepared: the lock with its reads, the task's and instance's
 * updates, and the last statement that writes everything left for it. A completion is the request with
 * the most statements of an agent's task (issue 18): each round trip saved here is one per task.
 */
import { getTableColumns, sql } from 'drizzle-orm';
import { type ExternalTaskRow, type ProcessInstanceRow, processInstances } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import type { AttemptMetadata } from '../../shared/types.js';
import { type Actor, pgClientOf, queryPrepared, type Tx } from '../common/index.js';
import { type PendingWrites, pendingStatement, pendingValues } from '../instances/index.js';
import { type LockedTaskRow, lockTaskWith, TASK_COLUMNS, withTaskDates } from '../lease/index.js';

/** What the completion reads with its lock: the stored report of this (task, attempt), an open step. */
type CompletionReads = {
  storedSha: string | null;
  openStep: { sequence: number; state: string } | null;
};

/**
 * The task locked, with the completion's two reads in the same prepared statement: the stored report of
 * this (task, attempt), if any, and a step of the task's current attempt still open.
 */
export function lockForCompletion(tx: Tx, actor: Actor, taskId: string, attempt: number) {
  return lockTaskWith<CompletionReads>(
    tx,
    actor,
    taskId,
    sql`, (SELECT request_sha256 FROM task_reports
            WHERE task_id = t.id AND attempt = ${attempt} AND operation = 'complete') AS "storedSha",
          (SELECT jsonb_build_object('sequence', s.sequence, 'state', s.state) FROM steps s
            WHERE s.task_id = t.id AND s.attempt = t.attempt AND s.state IN ('PROPOSED', 'APPROVED', 'STARTED')
            LIMIT 1) AS "openStep"`,
  );
}

export function assertNoOpenStep({ openStep }: CompletionReads) {
  if (openStep !== null) {
    throw new EngineError(
      'SEQUENCE_OUT_OF_ORDER',
      `Step ${openStep.sequence} is still ${openStep.state}; journal its outcome before completing the task.`,
      { expectedSequence: openStep.sequence },
    );
  }
}

/**
 * The completion's last statement: its history rows (TASK_COMPLETED and what entering the next node
 * wrote, in order; the chain trigger links them), its stored report, the worker's success (recordOutcome:
 * its count of consecutive failures back to 0 where it is not, so no row is written or locked
 * otherwise), and its task notices.
 */
const TAIL = pendingStatement(`,
  r AS (INSERT INTO task_reports (task_id, attempt, operation, request_sha256, outcome)
        VALUES ($3, $4, 'complete', $5, $6)),
  w AS (UPDATE workers SET consecutive_failures = 0
         WHERE principal_id = $7 AND worker_id = $8 AND consecutive_failures <> 0)`);

export async function writeTail(
  tx: Tx,
  pending: PendingWrites,
  actor: Actor,
  report: { taskId: string; workerId: string; attempt: number; requestSha: string; state: string },
) {
  await pgClientOf(tx).query({
    name: 'abada_completion_tail',
    text: TAIL,
    values: [
      ...pendingValues(pending),
      report.taskId,
      report.attempt,
      report.requestSha,
      JSON.stringify({ state: report.state }),
      actor.principalId,
      report.workerId,
    ],
  });
}

/** The instance's columns under their drizzle names, for RETURNING of hand-written statements. */
const INSTANCE_COLUMNS = sql.raw(
  Object.entries(getTableColumns(processInstances))
    .map(([key, column]) => `i.${column.name} AS "${key}"`)
    .join(', '),
);

/**
 * The task COMPLETED and the variables merged into its instance (top-level keys replace), in one
 * statement; both rows come back in their drizzle shape. The task row is locked already (the engine's
 * lock order: task, then instance).
 */
export async function completeRows(
  tx: Tx,
  task: LockedTaskRow,
  vars: Record<string, unknown>,
  metadata: AttemptMetadata,
): Promise<{ row: ExternalTaskRow; instance: ProcessInstanceRow }> {
  const [r] = await queryPrepared<ProcessInstanceRow & { completedTask: Record<string, unknown> }>(
    tx,
    sql`WITH done AS (
          UPDATE external_tasks t SET state = 'COMPLETED', metadata = ${JSON.stringify(metadata)}::jsonb,
                 lease_expires_at = NULL, updated_at = now(), ended_at = now()
           WHERE t.id = ${task.id} RETURNING ${TASK_COLUMNS})
        UPDATE process_instances i SET variables = i.variables || ${JSON.stringify(vars)}::jsonb, updated_at = now()
         WHERE i.id = ${task.processInstanceId}
        RETURNING ${INSTANCE_COLUMNS}, (SELECT to_jsonb(done) FROM done) AS "completedTask"`,
  );
  const { completedTask, ...instance } = r;
  return {
    row: withTaskDates(completedTask) as unknown as ExternalTaskRow,
    instance: instance as ProcessInstanceRow,
  };
}
