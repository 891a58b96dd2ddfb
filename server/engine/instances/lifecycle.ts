/**
 * The life of an instance after it started: cancellation, suspension and resumption. Each retires or
 * reopens the instance's work in one transaction, locking tasks first, then the instance (the engine's
 * lock order), so late reports get WORK_RETIRED and nothing races a completion advancing the token.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { externalTasks, processInstances, userTasks, type ProcessInstanceRow } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import { settleUnknownOutcomes } from '../lease/index.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { notifyTask } from '../events/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { enqueueChildDone, getInstance } from './start.js';
import { retireApprovalsOfTasks } from '../approvals/index.js';
import { type InstanceView, instanceView } from './views.js';
import { transaction } from '../../db/pg.js';

function requireOperator(actor: Actor, what: string) {
  if (actor.kind !== 'ADMIN')
    throw new EngineError('FORBIDDEN', `Only an admin can ${what} a process instance.`);
}

const LIVE_TASK_STATES = ['OPEN', 'LEASED', 'AWAITING_APPROVAL', 'AWAITING_CHILD'] as const;

/** Retires the live work of an instance: tasks → CANCELLED, pending approvals → RETIRED. Locks tasks first. */
async function retireWork(
  tx: Tx,
  inst: ProcessInstanceRow,
  actor: string,
  reason: 'CANCELLED' | 'SUSPENDED',
) {
  const tasks = await tx
    .select({ id: externalTasks.id, attempt: externalTasks.attempt, topicName: externalTasks.topicName })
    .from(externalTasks)
    .where(
      and(eq(externalTasks.processInstanceId, inst.id), inArray(externalTasks.state, [...LIVE_TASK_STATES])),
    )
    .orderBy(externalTasks.id)
    .for('update');
  if (tasks.length === 0) return;
  const ids = tasks.map((t) => t.id);
  await tx
    .update(externalTasks)
    .set({
      state: 'CANCELLED',
      workerId: null,
      leasedBy: null,
      leaseExpiresAt: null,
      errorType: reason,
      updatedAt: sql`now()`,
      endedAt: sql`now()`,
    })
    .where(inArray(externalTasks.id, ids));
  await retireApprovalsOfTasks(tx, ids, inst.projectId, actor);
  for (const t of tasks) {
    await appendHistory(tx, {
      projectId: inst.projectId,
      processInstanceId: inst.id,
      eventType: reason === 'CANCELLED' ? 'TASK_CANCELLED' : 'TASK_SUSPENDED',
      actor,
      taskId: t.id,
      attempt: t.attempt,
    });
    await notifyTask(tx, { ...t, processInstanceId: inst.id, projectId: inst.projectId }, 'CANCELLED');
  }
}

/** Locks the instance row; the caller has already checked that the actor may see it (getInstance). */
async function lockInstance(tx: Tx, id: string): Promise<ProcessInstanceRow> {
  const [row] = await tx.select().from(processInstances).where(eq(processInstances.id, id)).for('update');
  return row;
}

export async function cancelProcess(
  ctx: EngineContext,
  actor: Actor,
  id: string,
  reason: string,
): Promise<InstanceView> {
  requireOperator(actor, 'cancel');
  if (!reason?.trim()) throw invalid('Give a reason for the cancellation.', 'reason', 'required');
  return transaction(ctx.db, (tx) => cancelTx(tx, actor, id, reason, actorLabel(actor), 0)).then(
    instanceView,
  );
}

/**
 * Cancels one instance and, depth first, the children its agents delegated to that are still running:
 * cancelling a process retires all the work done on its behalf. A child's end then reaches the parent's
 * task through CHILD_DONE, which finds it retired and does nothing.
 */
async function cancelTx(
  tx: Tx,
  actor: Actor,
  id: string,
  reason: string,
  label: string,
  depth: number,
): Promise<ProcessInstanceRow> {
  const inst0 = await getInstance(tx, actor, id);
  await retireWork(tx, inst0, label, 'CANCELLED');
  const inst = await lockInstance(tx, id);
  if (inst.state === 'COMPLETED' || inst.state === 'CANCELLED' || inst.state === 'FAILED') {
    throw invalid(`The instance is already ${inst.state}; there is nothing to cancel.`, 'id', inst.state);
  }
  // Work created between our task scan and the instance lock (a completion advancing the token).
  await retireWork(tx, inst, label, 'CANCELLED');
  await tx
    .update(userTasks)
    .set({ state: 'CANCELLED' })
    .where(and(eq(userTasks.processInstanceId, id), eq(userTasks.state, 'OPEN')));
  const [row] = await tx
    .update(processInstances)
    .set({ state: 'CANCELLED', endedAt: sql`now()`, updatedAt: sql`now()` })
    .where(eq(processInstances.id, id))
    .returning();
  await appendHistory(tx, {
    projectId: row.projectId,
    processInstanceId: id,
    eventType: 'INSTANCE_CANCELLED',
    actor: label,
    data: { reason, cascadedFrom: depth > 0 ? 'parent' : undefined },
  });
  if (row.parentTaskId) await enqueueChildDone(tx, row.id);
  const children = await tx
    .select({ id: processInstances.id })
    .from(processInstances)
    .where(
      and(
        inArray(
          processInstances.parentTaskId,
          tx
            .select({ id: externalTasks.id })
            .from(externalTasks)
            .where(eq(externalTasks.processInstanceId, id)),
        ),
        inArray(processInstances.state, ['ACTIVE', 'SUSPENDED']),
      ),
    );
  for (const child of children) {
    await cancelTx(
      tx,
      actor,
      child.id,
      `the parent process ${id} was cancelled: ${reason}`,
      label,
      depth + 1,
    );
  }
  return row;
}

export async function suspendProcess(ctx: EngineContext, actor: Actor, id: string): Promise<InstanceView> {
  requireOperator(actor, 'suspend');
  return transaction(ctx.db, async (tx) => {
    const label = actorLabel(actor);
    await retireWork(tx, await getInstance(tx, actor, id), label, 'SUSPENDED');
    const inst = await lockInstance(tx, id);
    if (inst.state !== 'ACTIVE') {
      throw invalid(`Only an ACTIVE instance can be suspended; this one is ${inst.state}.`, 'id', inst.state);
    }
    await retireWork(tx, inst, label, 'SUSPENDED');
    return setInstanceState(tx, id, 'SUSPENDED', label);
  }).then(instanceView);
}

/** Resumes a suspended instance: its retired tasks reopen on a fresh attempt (the suspension costs none). */
export async function resumeProcess(ctx: EngineContext, actor: Actor, id: string): Promise<InstanceView> {
  requireOperator(actor, 'resume');
  return transaction(ctx.db, async (tx) => {
    const label = actorLabel(actor);
    await getInstance(tx, actor, id);
    const suspended = await tx
      .select()
      .from(externalTasks)
      .where(
        and(
          eq(externalTasks.processInstanceId, id),
          eq(externalTasks.state, 'CANCELLED'),
          eq(externalTasks.errorType, 'SUSPENDED'),
        ),
      )
      .for('update');
    const inst = await lockInstance(tx, id);
    if (inst.state !== 'SUSPENDED') {
      throw invalid(`Only a SUSPENDED instance can be resumed; this one is ${inst.state}.`, 'id', inst.state);
    }
    for (const t of suspended) {
      // A keyless write in flight when the work was retired is never re-sent: it waits for a person.
      if ((await settleUnknownOutcomes(tx, t, label)) > 0) continue;
      await tx
        .update(externalTasks)
        .set({
          state: 'OPEN',
          attempt: t.attempt + 1,
          maxAttempts: t.maxAttempts + 1,
          leaseExpiries: 0,
          errorType: null,
          availableAt: sql`now()`,
          endedAt: null,
          updatedAt: sql`now()`,
        })
        .where(eq(externalTasks.id, t.id));
      await appendHistory(tx, {
        projectId: inst.projectId,
        processInstanceId: id,
        eventType: 'TASK_RESUMED',
        actor: label,
        taskId: t.id,
        attempt: t.attempt + 1,
      });
      await notifyTask(tx, t, 'OPEN');
    }
    return setInstanceState(tx, id, 'ACTIVE', label);
  }).then(instanceView);
}

/** An instance suspended or resumed: its new state and the history row that says who did it. */
async function setInstanceState(tx: Tx, id: string, state: 'SUSPENDED' | 'ACTIVE', actor: string) {
  const [row] = await tx
    .update(processInstances)
    .set({ state, updatedAt: sql`now()` })
    .where(eq(processInstances.id, id))
    .returning();
  await appendHistory(tx, {
    projectId: row.projectId,
    processInstanceId: id,
    eventType: state === 'SUSPENDED' ? 'INSTANCE_SUSPENDED' : 'INSTANCE_RESUMED',
    actor,
  });
  return row;
}
