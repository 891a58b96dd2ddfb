/** The external_tasks statements of the hot paths: a report's lock and reads, the completion's update. */
import { getTableColumns } from 'drizzle-orm';
import { statement } from '../pg.js';
import type { PgTable } from 'drizzle-orm/pg-core';
import { type ExternalTaskRow, externalTasks, processInstances, type ProcessInstanceRow } from '../schema.js';

/** Columns of `table` (all, or `keys`) as `alias.column AS "key"`: rows read in their drizzle shape. */
export function columnsAs(alias: string, table: PgTable, keys?: readonly string[]): string {
  const columns = getTableColumns(table);
  return (keys ?? Object.keys(columns)).map((k) => `${alias}.${columns[k].name} AS "${k}"`).join(', ');
}

/** Every column of `external_tasks t`. */
export const TASK_COLUMNS = columnsAs('t', externalTasks);

/** TASK_COLUMNS plus what the lease checks need: whether the lease is live, the instance's state. */
export const LOCKED_TASK_COLUMNS = `${TASK_COLUMNS},
  (t.lease_expires_at IS NOT NULL AND t.lease_expires_at > now()) AS "leaseLive",
  (SELECT i.state FROM process_instances i WHERE i.id = t.process_instance_id) AS "instanceState"`;

/** A task row as a lock returns it. */
export type LockedTaskRow = ExternalTaskRow & { leaseLive: boolean; instanceState: string };

const DATE_KEYS = Object.entries(getTableColumns(externalTasks))
  .filter(([, column]) => column.dataType === 'date')
  .map(([key]) => key);

/** Rows read as JSON carry timestamps as strings; the drizzle row shape carries Dates. */
export function withTaskDates<T extends Record<string, unknown>>(row: T): T {
  for (const k of DATE_KEYS)
    if (typeof row[k] === 'string') (row as Record<string, unknown>)[k] = new Date(row[k] as string);
  return row;
}

/**
 * $1 task ids: their rows locked, in id order (no two transactions wait on each other in a circle),
 * before a statement that reads what goes with them. The lock is a statement of its own: one that
 * waited for a row lock reads the rest of the database as of its start, so it would miss what the
 * transaction it waited for committed (test/engine/core/journal.group.test.ts). Each id is locked by
 * its own lateral lookup: as `id = ANY($1) ORDER BY id FOR UPDATE` the generic plan (bitmap scan, sort)
 * grew with the tables, to 0.78 ms a call.
 */
export const LOCK_TASKS = statement<{ id: string }>(
  'tasks_lock',
  `SELECT t.id FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS u(id) ORDER BY id) u
     CROSS JOIN LATERAL (SELECT id FROM external_tasks WHERE id = u.id FOR UPDATE) t`,
);

/** $1 task id: the task row locked for the rest of the transaction (and only it). */
export const LOCK_TASK = statement<LockedTaskRow>(
  'task_lock',
  `SELECT ${LOCKED_TASK_COLUMNS} FROM external_tasks t WHERE t.id = $1 FOR UPDATE OF t`,
);

/**
 * What the completion reads of task `t` with its lock: the stored report of this (task, attempt $2), a
 * step of the task's current attempt still open, the instance's definition.
 */
export interface CompletionReads {
  storedSha: string | null;
  openStep: { sequence: number; state: string } | null;
  definitionId: string;
}

const COMPLETION_READS = `
  (SELECT request_sha256 FROM task_reports
    WHERE task_id = t.id AND attempt = $2 AND operation = 'complete') AS "storedSha",
  (SELECT jsonb_build_object('sequence', s.sequence, 'state', s.state) FROM steps s
    WHERE s.task_id = t.id AND s.attempt = t.attempt AND s.state IN ('PROPOSED', 'APPROVED', 'STARTED')
    LIMIT 1) AS "openStep",
  (SELECT i.definition_id FROM process_instances i WHERE i.id = t.process_instance_id) AS "definitionId"`;

/** $1 task id, $2 the report's attempt: the task and the completion's reads, after LOCK_TASKS. */
export const READ_FOR_COMPLETION = statement<LockedTaskRow & CompletionReads>(
  'task_read_for_completion',
  `SELECT ${LOCKED_TASK_COLUMNS}, ${COMPLETION_READS} FROM external_tasks t WHERE t.id = $1`,
);

/** $1 task id, $2 attempt: the completion's reads alone, after the journal locked the task. */
export const COMPLETION_READS_AFTER = statement<CompletionReads>(
  'task_completion_reads',
  `SELECT ${COMPLETION_READS} FROM external_tasks t WHERE t.id = $1`,
);

/** Every column of `process_instances i`, for RETURNING. */
export const INSTANCE_COLUMNS = columnsAs('i', processInstances);

/**
 * $1 task id, $2 metadata, $3 instance id, $4 variables (merged: top-level keys replace), $5 the end
 * node when the next node is an end event (the same update completes the instance there), else null.
 * The task COMPLETED and the instance updated in one statement; both rows in their drizzle shape.
 */
export const COMPLETE_TASK = statement<ProcessInstanceRow & { completedTask: Record<string, unknown> }>(
  'task_complete',
  `WITH done AS (
     UPDATE external_tasks t SET state = 'COMPLETED', metadata = $2::jsonb,
            lease_expires_at = NULL, updated_at = now(), ended_at = now()
      WHERE t.id = $1 RETURNING ${TASK_COLUMNS})
   UPDATE process_instances i SET variables = i.variables || $4::jsonb, updated_at = now(),
          state = CASE WHEN $5::text IS NULL THEN i.state ELSE 'COMPLETED' END,
          current_node_id = coalesce($5::text, i.current_node_id),
          ended_at = CASE WHEN $5::text IS NULL THEN i.ended_at ELSE now() END
    WHERE i.id = $3
   RETURNING ${INSTANCE_COLUMNS}, (SELECT to_jsonb(done) FROM done) AS "completedTask"`,
);

/**
 * One task whose timeout boundary is due, locked: live, its instance ACTIVE (a suspended instance's
 * boundary waits for the resume). SKIP LOCKED: engines sweeping together each take another task, and a
 * task a report holds is left to that report (the next sweep finds it again if it is still live).
 */
export const LOCK_DUE_BOUNDARY = statement<{ id: string }>(
  'task_lock_due_boundary',
  `SELECT t.id FROM external_tasks t JOIN process_instances i ON i.id = t.process_instance_id
    WHERE t.boundary_at <= now() AND i.state = 'ACTIVE'
      AND t.state IN ('OPEN', 'LEASED', 'AWAITING_APPROVAL', 'AWAITING_CHILD')
    ORDER BY t.boundary_at LIMIT 1 FOR UPDATE OF t SKIP LOCKED`,
);
