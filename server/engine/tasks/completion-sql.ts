/**
 * The completion's statements (db/statements): the lock with its reads, the task and instance update, the
 * last statement writing all the rest. Four round trips with last steps (BEGIN + load; the write with the
 * reads; the update; the last with COMMIT) or alone (BEGIN + lock + reads; update; last; COMMIT).
 */
import type { ExternalTaskRow, ProcessInstanceRow } from '../../db/schema.js';
import { execute, pipelined } from '../../db/pg.js';
import { COMPLETION_TAIL } from '../../db/statements/history.js';
import {
  COMPLETE_TASK,
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

/** The task locked and read with the completion's reads, in one round trip (alone; else completionReadsAfter). */
export async function lockForCompletion(tx: Tx, actor: Actor, taskId: string, attempt: number) {
  if (!isUuid(taskId)) throw notFound('external task', taskId);
  const [, [row]] = await pipelined(
    execute(tx, LOCK_TASKS, [[taskId]]),
    execute(tx, READ_FOR_COMPLETION, [taskId, attempt]),
  );
  return lockedRow(actor, taskId, row) as CompletionTask;
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

/** The completion's last statement (history, notices, its report, the worker's success), with its values. */
export function tailStatement(
  actor: Actor,
  last: LastWrites,
  report: { taskId: string; workerId: string; attempt: number; requestSha: string; state: string },
): Then {
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
export async function writeTail(tx: Tx, tail: Then) {
  await execute(tx, tail.statement, tail.values);
}

/**
 * The task COMPLETED and the variables merged into its instance (top-level keys replace) in one statement
 * returning both rows; with `endNodeId` (an end event next) it completes the instance too. The task row
 * is locked already (lock order: task, then instance).
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
