/**
 * The checks every worker report shares: the task is visible, not retired, leased by this caller and
 * worker, the lease is live (by the database clock), and the attempt is the current one.
 */
import { getTableColumns, type SQL, sql } from 'drizzle-orm';
import { type ExternalTaskRow, externalTasks } from '../../db/schema.js';
import { EngineError, notFound } from '../../errors.js';
import { type Actor, type Tx, queryPrepared, sameProject, isUuid } from '../common/index.js';

export type LockedTaskRow = ExternalTaskRow & { leaseLive: boolean; instanceState: string };

/**
 * Columns of `external_tasks t` under their drizzle names (`t.project_id AS "projectId"`, …), for
 * hand-written statements whose rows must read as ExternalTaskRow (or the part of it they select).
 */
export function taskColumns(keys: readonly (keyof ExternalTaskRow)[]): SQL {
  return sql.raw(keys.map((k) => `t.${externalTasks[k].name} AS "${k}"`).join(', '));
}

/** Every column of `external_tasks t` under its drizzle name. */
export const TASK_COLUMNS = taskColumns(
  Object.keys(getTableColumns(externalTasks)) as (keyof ExternalTaskRow)[],
);

/** TASK_COLUMNS plus what the lease checks need: whether the lease is live, the instance's state. */
export const LOCKED_TASK_COLUMNS = sql`${TASK_COLUMNS},
  (t.lease_expires_at IS NOT NULL AND t.lease_expires_at > now()) AS "leaseLive",
  (SELECT i.state FROM process_instances i WHERE i.id = t.process_instance_id) AS "instanceState"`;

const DATE_KEYS = ['leaseExpiresAt', 'leasedAt', 'availableAt', 'createdAt', 'updatedAt', 'endedAt'] as const;

/** Raw rows carry timestamps as strings; the drizzle row shape carries Dates. */
export function withTaskDates<T extends Record<string, unknown>>(row: T): T {
  for (const k of DATE_KEYS)
    if (row[k] != null) (row as Record<string, unknown>)[k] = new Date(row[k] as string);
  return row;
}

/** Locks the external-task row (and only it) for the rest of the transaction. */
export async function lockTask(tx: Tx, actor: Actor, taskId: string): Promise<LockedTaskRow> {
  return lockTaskWith(tx, actor, taskId, sql``);
}

/**
 * lockTask with the caller's own columns read in the same prepared statement (one round trip): `extra`
 * is a list of `, <expression> AS "<name>"` items that may use the task row `t`; they come back as
 * fields of the row under those names.
 */
export async function lockTaskWith<E extends Record<string, unknown>>(
  tx: Tx,
  actor: Actor,
  taskId: string,
  extra: SQL,
): Promise<LockedTaskRow & E> {
  if (!isUuid(taskId)) throw notFound('external task', taskId);
  const [row] = await queryPrepared<Record<string, unknown>>(
    tx,
    sql`SELECT ${LOCKED_TASK_COLUMNS}${extra} FROM external_tasks t WHERE t.id = ${taskId} FOR UPDATE OF t`,
  );
  if (!row || !sameProject(actor, row.projectId as string)) throw notFound('external task', taskId);
  return withTaskDates(row) as unknown as LockedTaskRow & E;
}

/** The task's work was retired: the task was cancelled, or its instance cancelled or suspended. */
export function isRetired(task: Pick<LockedTaskRow, 'state' | 'instanceState'>): boolean {
  return (
    task.state === 'CANCELLED' || task.instanceState === 'CANCELLED' || task.instanceState === 'SUSPENDED'
  );
}

export function assertNotRetired(task: LockedTaskRow) {
  if (isRetired(task)) {
    throw new EngineError(
      'WORK_RETIRED',
      'This work was retired (the instance was cancelled or suspended); drop it and fetch new work.',
    );
  }
}

/** The caller holds the live lease on the task at `attempt`. Order: retired, lease, attempt. */
export function assertLease(task: LockedTaskRow, actor: Actor, workerId: string, attempt: number) {
  assertNotRetired(task);
  if (
    task.state !== 'LEASED' ||
    task.workerId !== workerId ||
    task.leasedBy !== actor.principalId ||
    !task.leaseLive
  ) {
    throw new EngineError(
      'LEASE_NOT_HELD',
      task.state === 'LEASED' && task.workerId === workerId && !task.leaseLive
        ? 'Your lease on this task expired; stop working on it and fetch again (extend the lock sooner next time).'
        : 'You do not hold the lease on this task; stop working on it and fetch again.',
    );
  }
  if (attempt !== task.attempt) {
    throw new EngineError(
      'ATTEMPT_MISMATCH',
      `The task is on attempt ${task.attempt}, not ${attempt}; rebuild from a fresh fetch.`,
      {
        currentAttempt: task.attempt,
      },
    );
  }
}
