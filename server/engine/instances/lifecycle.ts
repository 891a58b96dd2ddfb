/**
 * Cancellation, suspension, resumption and the timeout boundary: each retires or reopens an instance's
 * work in one transaction, locking tasks first, then the instance (the engine's lock order), so late
 * reports get WORK_RETIRED and nothing races a completion advancing the token.
 */
import { and, eq, getTableColumns, inArray, type SQLWrapper, sql } from 'drizzle-orm';
import {
  type ExternalTaskRow,
  externalTasks,
  processInstances,
  userTasks,
  type ProcessInstanceRow,
} from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import { attemptHistory, settleUnknownOutcomes, settleWritesForGood } from '../lease/index.js';
import { type Actor, type EngineContext, type Tx, requireAdmin, systemAdmin } from '../common/index.js';
import { notifyTask } from '../events/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { enqueueChildDone, enterNode, findNode } from './start.js';
import { readDefinitionSpec } from '../definitions/index.js';
import { retireApprovalsOfTasks } from '../approvals/index.js';
import { getInstance, type InstanceView, instanceView } from './views.js';
import { transaction } from '../../db/pg.js';

export const LIVE_TASK_STATES = ['OPEN', 'LEASED', 'AWAITING_APPROVAL', 'AWAITING_CHILD'] as const;

/** The columns of a task whose work ends now: no worker, no lease. */
export const endedNow = () =>
  ({
    workerId: null,
    leasedBy: null,
    leaseExpiresAt: null,
    updatedAt: sql`now()`,
    endedAt: sql`now()`,
  }) as const;

/** Who cancels: the actor whose view of the instances applies, and the label its history rows carry. */
type Canceller = { actor: Actor; label: string };

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
    .where(and(eq(externalTasks.processInstanceId, inst.id), inArray(externalTasks.state, LIVE_TASK_STATES)))
    .orderBy(externalTasks.id)
    .for('update');
  if (tasks.length === 0) return;
  const ids = tasks.map((t) => t.id);
  await tx
    .update(externalTasks)
    .set({ state: 'CANCELLED', errorType: reason, ...endedNow() })
    .where(inArray(externalTasks.id, ids));
  await retireApprovalsOfTasks(tx, ids, inst.projectId, actor);
  for (const t of tasks) {
    const task = { ...t, processInstanceId: inst.id, projectId: inst.projectId };
    const eventType = reason === 'CANCELLED' ? 'TASK_CANCELLED' : 'TASK_SUSPENDED';
    await appendHistory(tx, { ...attemptHistory(task, actor), eventType });
    await notifyTask(tx, task, 'CANCELLED');
  }
}

/** Locks the instance row; callers check first that the actor may see it (getInstance). */
export async function lockInstance(tx: Tx, id: string): Promise<ProcessInstanceRow> {
  const [row] = await tx.select().from(processInstances).where(eq(processInstances.id, id)).for('update');
  return row;
}

export async function cancelProcess(ctx: EngineContext, actor: Actor, id: string, reason: string) {
  requireAdmin(actor, 'cancel a process instance');
  if (!reason?.trim()) throw invalid('Give a reason for the cancellation.', 'reason', 'required');
  const by = { actor, label: actorLabel(actor) };
  return transaction(ctx.db, (tx) => cancelTx(tx, by, id, reason, 0)).then(instanceView);
}

/**
 * Cancels one instance and, depth first, its running delegated children: all work done on its behalf.
 * A child's end then reaches the parent's task through CHILD_DONE, which finds it retired.
 */
async function cancelTx(tx: Tx, by: Canceller, id: string, reason: string, depth: number) {
  const { label } = by;
  await retireWork(tx, await getInstance(tx, by.actor, id), label, 'CANCELLED');
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
  const tasks = tx
    .select({ id: externalTasks.id })
    .from(externalTasks)
    .where(eq(externalTasks.processInstanceId, id));
  await cancelChildren(tx, by, tasks, `the parent process ${id} was cancelled: ${reason}`, depth + 1);
  return row;
}

/** Cancels, depth first, the running children that the tasks `parentTaskIds` delegated to. */
async function cancelChildren(
  tx: Tx,
  by: Canceller,
  parentTaskIds: SQLWrapper | string[],
  reason: string,
  depth: number,
) {
  const children = await tx
    .select({ id: processInstances.id })
    .from(processInstances)
    .where(
      and(
        inArray(processInstances.parentTaskId, parentTaskIds),
        inArray(processInstances.state, ['ACTIVE', 'SUSPENDED']),
      ),
    );
  for (const child of children) await cancelTx(tx, by, child.id, reason, depth);
}

export async function suspendProcess(ctx: EngineContext, actor: Actor, id: string): Promise<InstanceView> {
  requireAdmin(actor, 'suspend a process instance');
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

/**
 * Resumes a suspended instance: its retired tasks reopen on a fresh attempt (the suspension costs none),
 * except a task whose timeout boundary came due meanwhile: it fires now, once the instance is ACTIVE.
 */
export async function resumeProcess(ctx: EngineContext, actor: Actor, id: string): Promise<InstanceView> {
  requireAdmin(actor, 'resume a process instance');
  return transaction(ctx.db, async (tx) => {
    const label = actorLabel(actor);
    await getInstance(tx, actor, id);
    const suspended = await tx
      .select({ ...getTableColumns(externalTasks), due: sql<boolean>`coalesce(boundary_at <= now(), false)` })
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
    for (const { due, ...t } of suspended) if (!due) await reopenSuspended(tx, t, label);
    let resumed = await setInstanceState(tx, id, 'ACTIVE', label);
    for (const { due, ...t } of suspended) {
      if (due) resumed = await fireTimeout(tx, t, resumed);
    }
    return resumed;
  }).then(instanceView);
}

/** A task retired by the suspension reopens on attempt+1; a keyless write in flight waits for a person. */
async function reopenSuspended(tx: Tx, t: ExternalTaskRow, label: string): Promise<void> {
  if ((await settleUnknownOutcomes(tx, t, label)) > 0) return;
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
  await appendHistory(tx, { ...attemptHistory(t, label), eventType: 'TASK_RESUMED', attempt: t.attempt + 1 });
  await notifyTask(tx, t, 'OPEN');
}

/** The engine itself, acting on any project's instances (a boundary cancelling a child). */
const ENGINE: Canceller = { actor: systemAdmin('engine', 'engine', null), label: 'engine' };

/**
 * Fires the timeout boundary of a task's agent node (SPEC §15.4). The caller holds the task's lock, then
 * the instance's, and checked the instance ACTIVE and the task live (or suspended, being resumed). The
 * work is retired as a cancellation does (a write left STARTED becomes OUTCOME_UNKNOWN with its incident,
 * no lease re-sends it; approvals retired; a running child cancelled) and the token moves to on_timeout.
 */
export async function fireTimeout(
  tx: Tx,
  task: ExternalTaskRow,
  inst: ProcessInstanceRow,
): Promise<ProcessInstanceRow> {
  const spec = await readDefinitionSpec(tx, inst.definitionId);
  const node = findNode(spec, task.nodeId);
  if (node.type !== 'agent' || !node.onTimeout)
    throw new EngineError('INTERNAL', `node ${node.id} has no timeout boundary`);
  const { label } = ENGINE;
  await appendHistory(tx, {
    ...attemptHistory(task, label),
    eventType: 'BOUNDARY_TIMEOUT',
    data: {
      nodeId: node.id,
      timeoutMinutes: node.timeoutMinutes ?? null,
      dueAt: task.boundaryAt?.toISOString() ?? null,
      taskState: task.state === 'CANCELLED' ? (task.errorType ?? task.state) : task.state,
      to: node.onTimeout,
    },
  });
  await settleWritesForGood(tx, task, label);
  await tx
    .update(externalTasks)
    .set({
      state: 'CANCELLED',
      boundary: 'TIMEOUT',
      errorType: 'BOUNDARY_TIMEOUT',
      errorMessage: `the node timed out after ${node.timeoutMinutes} minutes`,
      ...endedNow(),
    })
    .where(eq(externalTasks.id, task.id));
  await retireApprovalsOfTasks(tx, [task.id], inst.projectId, label);
  const why = `the node ${node.id} of the parent process ${inst.id} timed out`;
  await cancelChildren(tx, ENGINE, [task.id], why, 1);
  await notifyTask(tx, task, 'CANCELLED');
  return (await enterNode(tx, inst, spec, node.onTimeout, label)) ?? inst;
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
