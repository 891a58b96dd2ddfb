/**
 * The completion's own statements, each prepared: the lock with its reads, the task's and instance's
 * updates, and the last statement that writes everything left for it. A completion is the request with
 * the most statements of an agent's task (issue 18): each round trip saved here is one per task. With
 * its last steps (the Agent Worker's way) it takes four: the journal's `BEGIN; load`, the journal's
 * write with the completion's reads, the task's and instance's updates (an end event next: the
 * instance completes in the same update), and the last statement with the COMMIT. Alone it takes
 * five: BEGIN, the lock with the reads, the updates, the last statement, COMMIT.
 */
import { getTableColumns, type SQL, sql } from 'drizzle-orm';
import { type ExternalTaskRow, type ProcessInstanceRow, processInstances } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import type { AttemptMetadata } from '../../shared/types.js';
import { type Actor, pgClientOf, queryPrepared, sqlText, type Tx } from '../common/index.js';
import { type PendingWrites, pendingStatement, pendingValues } from '../instances/index.js';
import { literal, prepareWithJournal } from '../journal/index.js';
import { type LockedTaskRow, lockTaskWith, TASK_COLUMNS, withTaskDates } from '../lease/index.js';

/**
 * What the completion reads with its lock: the stored report of this (task, attempt), a step of the
 * task's current attempt still open, and the instance's definition (which node comes next).
 */
type CompletionReads = {
  storedSha: string | null;
  openStep: { sequence: number; state: string } | null;
  definitionId: string;
};

/** The completion's reads of task `t`; `attempt` is the report's attempt. */
const completionReads = (attempt: SQL) => sql`
  (SELECT request_sha256 FROM task_reports
    WHERE task_id = t.id AND attempt = ${attempt} AND operation = 'complete') AS "storedSha",
  (SELECT jsonb_build_object('sequence', s.sequence, 'state', s.state) FROM steps s
    WHERE s.task_id = t.id AND s.attempt = t.attempt AND s.state IN ('PROPOSED', 'APPROVED', 'STARTED')
    LIMIT 1) AS "openStep",
  (SELECT i.definition_id FROM process_instances i WHERE i.id = t.process_instance_id) AS "definitionId"`;

/** The locked task, with what the completion reads, as completeIn works on it. */
export type CompletionTask = LockedTaskRow & CompletionReads;

/**
 * The task locked, with the completion's reads in the same prepared statement. (When the completion's
 * last steps travel with it, the journal has locked the task, and the same reads run with the journal's
 * write: completionReadsAfter.)
 */
export function lockForCompletion(tx: Tx, actor: Actor, taskId: string, attempt: number) {
  return lockTaskWith<CompletionReads>(tx, actor, taskId, sql`, ${completionReads(sql`${attempt}`)}`);
}

prepareWithJournal(
  'abada_completion_reads',
  `SELECT ${sqlText(completionReads(sql.raw('$2')))} FROM external_tasks t WHERE t.id = $1`,
);

/** The completion's reads after the journal's write of its last steps (journalThen's `after`). */
export function completionReadsAfter(taskId: string, attempt: number): string {
  return `EXECUTE abada_completion_reads(${literal(taskId)}, ${literal(attempt)})`;
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

/** What the completion's last statement writes besides what it left pending. */
export interface CompletionReport {
  taskId: string;
  workerId: string;
  attempt: number;
  requestSha: string;
  state: string;
}

function tailValues(pending: PendingWrites, actor: Actor, report: CompletionReport) {
  return [
    ...pendingValues(pending),
    report.taskId,
    report.attempt,
    report.requestSha,
    JSON.stringify({ state: report.state }),
    actor.principalId,
    report.workerId,
  ];
}

/** The completion's last statement on the completion's own transaction (one prepared statement). */
export async function writeTail(tx: Tx, pending: PendingWrites, actor: Actor, report: CompletionReport) {
  await pgClientOf(tx).query({
    name: 'abada_completion_tail',
    text: TAIL,
    values: tailValues(pending, actor, report),
  });
}

// (SQL-level prepared statements share the protocol's names: this one has its own)
prepareWithJournal('abada_completion_tail_sql', TAIL);

/** The same statement as journalThen's `last`, sent with the COMMIT of the journal's transaction. */
export function tailStatement(pending: PendingWrites, actor: Actor, report: CompletionReport): string {
  return `EXECUTE abada_completion_tail_sql(${tailValues(pending, actor, report).map(literal).join(', ')})`;
}

/** The instance's columns under their drizzle names, for RETURNING of hand-written statements. */
const INSTANCE_COLUMNS = sql.raw(
  Object.entries(getTableColumns(processInstances))
    .map(([key, column]) => `i.${column.name} AS "${key}"`)
    .join(', '),
);

/**
 * The task COMPLETED and the variables merged into its instance (top-level keys replace), in one
 * statement; both rows come back in their drizzle shape. With `endNodeId` (the next node is an end
 * event) the same update completes the instance there. The task row is locked already (the engine's
 * lock order: task, then instance).
 */
export async function completeRows(
  tx: Tx,
  task: LockedTaskRow,
  vars: Record<string, unknown>,
  metadata: AttemptMetadata,
  endNodeId: string | null,
): Promise<{ row: ExternalTaskRow; instance: ProcessInstanceRow }> {
  const ends = endNodeId !== null;
  const end = ends ? sql`, state = 'COMPLETED', current_node_id = ${endNodeId}, ended_at = now()` : sql``;
  const [r] = await queryPrepared<ProcessInstanceRow & { completedTask: Record<string, unknown> }>(
    tx,
    sql`WITH done AS (
          UPDATE external_tasks t SET state = 'COMPLETED', metadata = ${JSON.stringify(metadata)}::jsonb,
                 lease_expires_at = NULL, updated_at = now(), ended_at = now()
           WHERE t.id = ${task.id} RETURNING ${TASK_COLUMNS})
        UPDATE process_instances i SET variables = i.variables || ${JSON.stringify(vars)}::jsonb, updated_at = now()${end}
         WHERE i.id = ${task.processInstanceId}
        RETURNING ${INSTANCE_COLUMNS}, (SELECT to_jsonb(done) FROM done) AS "completedTask"`,
  );
  const { completedTask, ...instance } = r;
  return {
    row: withTaskDates(completedTask) as unknown as ExternalTaskRow,
    instance: instance as ProcessInstanceRow,
  };
}
