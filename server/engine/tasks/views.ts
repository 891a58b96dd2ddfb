/** An external task as callers see it: the row without its agent work (a worker gets that with its lease). */
import { asc, eq, inArray } from 'drizzle-orm';
import { type ExternalTaskRow, externalTasks } from '../../db/schema.js';
import { type Actor, type Executor, isUuid, sameProject } from '../common/index.js';

/** What a caller sees of a task row (without its agent work; `deferrals` counts the current attempt's). */
const TASK_VIEW = [
  'id',
  'projectId',
  'processInstanceId',
  'nodeId',
  'nodeType',
  'topicName',
  'state',
  'priority',
  'attempt',
  'maxAttempts',
  'deferrals',
  'workerId',
  'leaseExpiresAt',
  'availableAt',
  'errorType',
  'errorMessage',
  'metadata',
  'createdAt',
  'updatedAt',
  'endedAt',
] as const satisfies readonly (keyof ExternalTaskRow)[];

export type TaskView = Pick<ExternalTaskRow, (typeof TASK_VIEW)[number]>;

export function taskView(r: ExternalTaskRow): TaskView {
  return Object.fromEntries(TASK_VIEW.map((k) => [k, r[k]])) as TaskView;
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
