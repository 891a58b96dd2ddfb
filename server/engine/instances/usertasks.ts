/** Human tasks (`user_task` nodes): completed by a person of a candidate group, then the token moves on. */
import { eq, inArray, sql } from 'drizzle-orm';
import { processInstances, userTasks } from '../../db/schema.js';
import { EngineError, notFound, invalid } from '../../errors.js';
import { type Actor, type EngineContext, sameProject, isUuid } from '../common/index.js';
import { readDefinitionSpec } from '../definitions/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { enterNode, findNode } from './start.js';
import { lockInstance } from './lifecycle.js';
import { type UserTaskView, userTaskView } from './views.js';
import { transaction } from '../../db/pg.js';

export async function completeUserTask(ctx: EngineContext, actor: Actor, id: string, variables: unknown) {
  if (actor.kind === 'WORKER')
    throw new EngineError('FORBIDDEN', 'A worker credential cannot complete human tasks.');
  if (!isUuid(id)) throw notFound('user task', id);
  const vars = variables ?? {};
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) {
    throw invalid('variables must be a JSON object.', 'variables', 'not an object');
  }
  return transaction(ctx.db, async (tx) => {
    const [ut] = await tx.select().from(userTasks).where(eq(userTasks.id, id)).for('update');
    if (!ut || !sameProject(actor, ut.projectId)) throw notFound('user task', id);
    if (actor.kind === 'HUMAN' && !ut.candidateGroups.some((g) => actor.groups.includes(g))) {
      throw new EngineError(
        'FORBIDDEN',
        `Only members of ${ut.candidateGroups.join(' or ')} can complete this task.`,
      );
    }
    const inst = await lockInstance(tx, ut.processInstanceId);
    if (ut.state === 'CANCELLED' || inst.state !== 'ACTIVE') {
      throw new EngineError(
        'WORK_RETIRED',
        'The process is not active any more (cancelled, suspended or ended); this task has no effect.',
      );
    }
    if (ut.state !== 'OPEN') throw new EngineError('ALREADY_DECIDED', 'Someone already completed this task.');
    const [done] = await tx
      .update(userTasks)
      .set({ state: 'COMPLETED', completedBy: actor.principalId, completedAt: sql`now()` })
      .where(eq(userTasks.id, id))
      .returning();
    // the task's variables merge into the instance's (top-level keys replace)
    const [updated] = await tx
      .update(processInstances)
      .set({
        variables: sql`${processInstances.variables} || ${JSON.stringify(vars)}::jsonb`,
        updatedAt: sql`now()`,
      })
      .where(eq(processInstances.id, inst.id))
      .returning();
    await appendHistory(tx, {
      projectId: ut.projectId,
      processInstanceId: ut.processInstanceId,
      eventType: 'USER_TASK_COMPLETED',
      actor: actorLabel(actor),
      data: { userTaskId: id, nodeId: ut.nodeId, variables: Object.keys(vars) },
    });
    const spec = await readDefinitionSpec(tx, inst.definitionId);
    const node = findNode(spec, ut.nodeId);
    await enterNode(tx, updated, spec, node.next!, 'engine');
    return done;
  }).then(userTaskView);
}

/** The user tasks of several instances, oldest first (one query for a page of instances). */
export async function userTasksOf(ctx: EngineContext, instanceIds: string[]): Promise<UserTaskView[]> {
  if (instanceIds.length === 0) return [];
  const rows = await ctx.db
    .select()
    .from(userTasks)
    .where(inArray(userTasks.processInstanceId, instanceIds))
    .orderBy(userTasks.createdAt);
  return rows.map(userTaskView);
}
