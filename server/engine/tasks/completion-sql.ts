/**
 * The completion's statements (db/statements): the lock with its reads, the task's and instance's
 * update, and the last statement that writes everything left for it. With its last steps (the Agent
 * Worker's way) a completion takes four round trips: the journal's `BEGIN` + load, the journal's write
 * with the completion's reads, the task's and instance's update (an end event next: the instance
 * completes in the same update), and the last statement with the COMMIT. Alone it takes four as well:
 * BEGIN with the lock and its reads, the update, the last statement, COMMIT.
 */
import type { ExternalTaskRow, ProcessInstanceRow } from '../../db/schema.js';
import { execute, pipelined } from '../../db/pg.js';
import { COMPLETION_TAIL } from '../../db/statements/history.js';
import {
  COMPLETE_TASK,
  COMPLETION_READS_AFTER,
  type CompletionReads,
  LOCK_TASKS,
  READ_FOR_COMPLETION,
} from '../../db/statements/tasks.js';
import { EngineError, notFound } from '../../errors.js';
import type { AttemptMetadata } from '../../shared/types.js';
import { type Actor, isUuid, type Tx } from '../common/index.js';
import { type LastWrites, lastWritesValues } from '../instances/index.js';
import type { Then } from '../journal/index.js';
import { type LockedTaskRow, lockedRow, withTaskDates } from '../lease/index.js';

/** The locked task, with what the completion reads, as completeIn works on it. */
export type CompletionTask = LockedTaskRow & CompletionReads;

/**
 * The task locked, then read with the completion's reads (sent together: one round trip). (When the completion's last
 * steps travel with it, the journal has locked the task, and the same reads run with the journal's
 * write: completionReadsAfter.)
 */
export async function lockForCompletion(tx: Tx, actor: Actor, taskId: string, attempt: number) {
  if (!isUuid(taskId)) throw notFound('external task', taskId);
  const [, [row]] = await pipelined(
    execute(tx, LOCK_TASKS, [[taskId]]),
    execute(tx, READ_FOR_COMPLETION, [taskId, attempt]),
  );
  return lockedRow(actor, taskId, row) as CompletionTask;
}

/** The completion's reads after the journal's write of its last steps (journalThen's `after`). */
export function completionReadsAfter(taskId: string, attempt: number): Then {
  return { statement: COMPLETION_READS_AFTER, values: [taskId, attempt] };
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

/** What the completion's last statement writes besides what it left last. */
export interface CompletionReport {
  taskId: string;
  workerId: string;
  attempt: number;
  requestSha: string;
  state: string;
}

/** The completion's last statement (history, notices, its report, the worker's success), with its values. */
export function tailStatement(last: LastWrites, actor: Actor, report: CompletionReport): Then {
  return {
    statement: COMPLETION_TAIL,
    values: [
      ...lastWritesValues(last),
      report.taskId,
      report.attempt,
      report.requestSha,
      JSON.stringify({ state: report.state }),
      actor.principalId,
      report.workerId,
    ],
  };
}

/** The completion's last statement on the completion's own transaction. */
export async function writeTail(tx: Tx, last: LastWrites, actor: Actor, report: CompletionReport) {
  const { statement, values } = tailStatement(last, actor, report);
  await execute(tx, statement, values);
}

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
  const [r] = await execute(tx, COMPLETE_TASK, [
    task.id,
    JSON.stringify(metadata),
    task.processInstanceId,
    JSON.stringify(vars),
    endNodeId,
  ]);
  const { completedTask, ...instance } = r;
  return { row: withTaskDates(completedTask) as ExternalTaskRow, instance };
}
