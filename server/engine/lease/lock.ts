/** The lock every worker report takes, and the checks they share (the lease live by the database clock). */
import { execute } from '../../db/pg.js';
import { LOCK_TASK, type LockedTaskRow } from '../../db/statements/tasks.js';
import { EngineError, notFound } from '../../errors.js';
import { type Actor, type Tx, sameProject, isUuid } from '../common/index.js';

/** A locked task row as the caller may see it: NOT_FOUND when there is none or it is another project's. */
export function lockedRow(actor: Actor, taskId: string, row: LockedTaskRow | undefined): LockedTaskRow {
  if (!row || !sameProject(actor, row.projectId)) throw notFound('external task', taskId);
  return row;
}

/** Locks the external-task row (and only it) for the rest of the transaction. */
export async function lockTask(tx: Tx, actor: Actor, taskId: string): Promise<LockedTaskRow> {
  if (!isUuid(taskId)) throw notFound('external task', taskId);
  const [row] = await execute(tx, LOCK_TASK, [taskId]);
  return lockedRow(actor, taskId, row);
}

/** The task was cancelled (a timeout boundary too), or its instance cancelled or suspended. */
export function isRetired(task: Pick<LockedTaskRow, 'state' | 'instanceState'>): boolean {
  return (
    task.state === 'CANCELLED' || task.instanceState === 'CANCELLED' || task.instanceState === 'SUSPENDED'
  );
}

export function assertNotRetired(task: LockedTaskRow) {
  if (isRetired(task)) {
    throw new EngineError(
      'WORK_RETIRED',
      'This work was retired (the instance was cancelled or suspended, or its node timed out); drop it and fetch new work.',
    );
  }
}

/** The caller holds the live lease on the task at `attempt`. Order: retired, lease, attempt. */
export function assertLease(task: LockedTaskRow, actor: Actor, workerId: string, attempt: number) {
  assertNotRetired(task);
  const leasedToWorker = task.state === 'LEASED' && task.workerId === workerId;
  if (!leasedToWorker || task.leasedBy !== actor.principalId || !task.leaseLive) {
    throw new EngineError(
      'LEASE_NOT_HELD',
      leasedToWorker && !task.leaseLive
        ? 'Your lease on this task expired; stop working on it and fetch again (extend the lock sooner next time).'
        : 'You do not hold the lease on this task; stop working on it and fetch again.',
    );
  }
  if (attempt !== task.attempt) {
    throw new EngineError(
      'ATTEMPT_MISMATCH',
      `The task is on attempt ${task.attempt}, not ${attempt}; rebuild from a fresh fetch.`,
      { currentAttempt: task.attempt },
    );
  }
}
