/**
 * Delegation (SPEC §6): a `delegate:<process>` call starts a child process within the depth limit and
 * parks the parent task AWAITING_CHILD without a lease. When the child ends, an idempotent CHILD_DONE job
 * completes the parent's step with its outputs (or final status) and reopens the task on the same attempt.
 */
import { and, eq, sql } from 'drizzle-orm';
import { externalTasks, processInstances, steps, type StepRow } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { type ToolBinding, readDefinitionSpec } from '../definitions/index.js';
import type { EngineContext, Tx } from '../common/index.js';
import { notifyTask } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { startInstanceTx } from './start.js';
import { attemptHistory, type LockedTaskRow } from '../lease/index.js';

export async function startDelegation(
  tx: Tx,
  ctx: EngineContext,
  task: LockedTaskRow,
  step: StepRow,
  binding: ToolBinding,
  args: Record<string, unknown>,
): Promise<{ childInstanceId: string }> {
  const [parent] = await tx
    .select({ depth: processInstances.depth, startedBy: processInstances.startedBy })
    .from(processInstances)
    .where(eq(processInstances.id, task.processInstanceId));
  const depth = (parent?.depth ?? 0) + 1;
  if (depth > ctx.config.maxDelegationDepth) {
    throw new EngineError(
      'LIMIT_EXCEEDED',
      `Delegation is limited to ${ctx.config.maxDelegationDepth} levels; ${binding.ref} would be level ${depth}.`,
      { limit: 'delegation_depth', used: depth, max: ctx.config.maxDelegationDepth },
    );
  }
  const child = await startInstanceTx(tx, {
    projectId: task.projectId,
    key: binding.tool,
    variables: args,
    businessKey: null,
    startedBy: parent?.startedBy ?? null,
    actor: `delegate:${task.id}#${task.attempt}.${step.sequence}`,
    parentTaskId: task.id,
    parentSequence: step.sequence,
    parentAttempt: task.attempt,
    depth,
  });
  await tx
    .update(externalTasks)
    .set({ state: 'AWAITING_CHILD', leasedBy: null, leaseExpiresAt: null, updatedAt: sql`now()` })
    .where(eq(externalTasks.id, task.id));
  await appendHistory(tx, {
    ...attemptHistory(task, 'engine'),
    eventType: 'CHILD_STARTED',
    sequence: step.sequence,
    data: { childInstanceId: child.id, key: binding.tool, depth },
  });
  await notifyTask(tx, task, 'AWAITING_CHILD');
  return { childInstanceId: child.id };
}

/** The CHILD_DONE job: idempotent, a second run finds the step already completed and does nothing. */
export async function childDone(tx: Tx, ctx: EngineContext, childInstanceId: string): Promise<void> {
  const [child] = await tx.select().from(processInstances).where(eq(processInstances.id, childInstanceId));
  if (!child?.parentTaskId || child.parentSequence == null) return;
  const [task] = await tx
    .select()
    .from(externalTasks)
    .where(eq(externalTasks.id, child.parentTaskId))
    .for('update');
  // Only the attempt that delegated waits for this child: after a suspension the task runs a later
  // attempt whose step at the same sequence may be another delegation (another child's business).
  if (task?.state !== 'AWAITING_CHILD') return;
  if (child.parentAttempt != null && child.parentAttempt !== task.attempt) return;
  const stepKey = and(
    eq(steps.taskId, task.id),
    eq(steps.attempt, task.attempt),
    eq(steps.sequence, child.parentSequence),
  );
  const [step] = await tx.select().from(steps).where(stepKey);
  if (step?.state !== 'STARTED') return;
  const spec = await readDefinitionSpec(tx, child.definitionId);
  const vars = child.variables;
  const outputs = spec.outputs.length
    ? Object.fromEntries(spec.outputs.map((k) => [k, vars[k] ?? null]))
    : vars;
  const response = {
    childInstanceId: child.id,
    process: child.key,
    state: child.state,
    outputs: child.state === 'COMPLETED' ? outputs : null,
  };
  await tx
    .update(steps)
    .set({ state: 'COMPLETED', responseEnc: ctx.sealer.sealJson(response), updatedAt: sql`now()` })
    .where(stepKey);
  await tx
    .update(externalTasks)
    .set({ state: 'OPEN', workerId: null, availableAt: sql`now()`, updatedAt: sql`now()` })
    .where(eq(externalTasks.id, task.id));
  await appendHistory(tx, {
    ...attemptHistory(task, 'engine'),
    eventType: 'CHILD_DONE',
    sequence: step.sequence,
    data: { childInstanceId: child.id, childState: child.state },
  });
  await notifyTask(tx, task, 'OPEN');
}
