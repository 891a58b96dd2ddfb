/** An external task as callers see it: the row without its agent work (a worker gets that with its lease). */
import { asc, eq, inArray } from 'drizzle-orm';
import { type ExternalTaskRow, externalTasks } from '../../db/schema.js';
import { type Actor, type Executor, isUuid, sameProject } from '../common/index.js';
import type { AttemptMetadata } from '../../shared/types.js';

export interface TaskView {
  id: string;
  projectId: string;
  processInstanceId: string;
  nodeId: string;
  nodeType: ExternalTaskRow['nodeType'];
  topicName: string;
  state: ExternalTaskRow['state'];
  priority: number;
  attempt: number;
  maxAttempts: number;
  /** deferrals on the current attempt (deferTask) */
  deferrals: number;
  workerId: string | null;
  leaseExpiresAt: Date | null;
  availableAt: Date;
  errorType: string | null;
  errorMessage: string | null;
  metadata: AttemptMetadata | null;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

export function taskView(r: ExternalTaskRow): TaskView {
  return {
    id: r.id,
    projectId: r.projectId,
    processInstanceId: r.processInstanceId,
    nodeId: r.nodeId,
    nodeType: r.nodeType,
    topicName: r.topicName,
    state: r.state,
    priority: r.priority,
    attempt: r.attempt,
    maxAttempts: r.maxAttempts,
    deferrals: r.deferrals,
    workerId: r.workerId,
    leaseExpiresAt: r.leaseExpiresAt,
    availableAt: r.availableAt,
    errorType: r.errorType,
    errorMessage: r.errorMessage,
    metadata: r.metadata,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    endedAt: r.endedAt,
  };
}

/** An external task as it stands, or null when it does not exist or the actor's project may not see it. */
export async function getTask(
  ex: Executor,
  actor: Pick<Actor, 'projectId'>,
  id: string,
): Promise<TaskView | null> {
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
