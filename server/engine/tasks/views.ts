/** An external task as callers see it: the row without its agent work (a worker gets that with its lease). */
import { asc, eq, inArray } from 'drizzle-orm';
import { type ExternalTaskRow, externalTasks } from '../../db/schema.js';
import { type Actor, type Executor, isUuid, omit, sameProject } from '../common/index.js';

/** What a caller does not see of a task row: its agent work and the lease's internals. */
const TASK_HIDDEN = [
  'agentWork',
  'leasedBy',
  'leaseRequestId',
  'leasedAt',
  'leaseExpiries',
  'boundaryAt',
  'boundary',
] as const;

export type TaskView = Omit<ExternalTaskRow, (typeof TASK_HIDDEN)[number]>;

export function taskView(r: ExternalTaskRow): TaskView {
  return omit(r, TASK_HIDDEN);
}

/** An external task as it stands, or null when it does not exist or the actor's project may not see it. */
export async function getTask(ex: Executor, actor: Pick<Actor, 'projectId'>, id: string) {
  if (!isUuid(id)) return null;
  const [row] = await ex.select().from(externalTasks).where(eq(externalTasks.id, id));
  return row && sameProject(actor as Actor, row.projectId) ? taskView(row) : null;
}

/** The external tasks of several instances, oldest first (one query for a page of instances). */
export async function tasksOfInstances(ex: Executor, instanceIds: readonly string[]): Promise<TaskView[]> {
  const rows = await ex
    .select()
    .from(externalTasks)
    .where(inArray(externalTasks.processInstanceId, [...instanceIds]))
    .orderBy(asc(externalTasks.createdAt));
  return rows.map(taskView);
}
