/** Lease extension, operator retry and tool credentials: small commands on one external task. */
import { eq, sql } from 'drizzle-orm';
import { externalTasks } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import {
  attemptHistory,
  closeTaskFailedIncidents,
  assertLease,
  assertNotRetired,
  lockTask,
} from '../lease/index.js';
import { type Actor, type EngineContext, requireAdmin } from '../common/index.js';
import { notifyTask } from '../events/index.js';
import { readCredential } from '../definitions/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { type TaskView, taskView } from './views.js';
import { transaction } from '../../db/pg.js';

export interface ExtendLeaseInput {
  taskId: string;
  workerId: string;
  lockDurationMs: number;
  attempt?: number | null;
}

/** Extends a live lease by lockDurationMs from now; an expired lease cannot be revived. */
export async function extendLease(ctx: EngineContext, actor: Actor, input: ExtendLeaseInput) {
  const ms = input.lockDurationMs;
  if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000) {
    throw invalid('lockDurationMs is from 100 ms to 1 hour.', 'lockDurationMs', 'out of range');
  }
  const extended = await transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, input.taskId);
    assertLease(task, actor, input.workerId, input.attempt ?? task.attempt);
    const [row] = await tx
      .update(externalTasks)
      .set({ leaseExpiresAt: sql`now() + make_interval(secs => ${ms / 1000})`, updatedAt: sql`now()` })
      .where(eq(externalTasks.id, task.id))
      .returning();
    return row;
  });
  return taskView(extended);
}

/** An operator retries a FAILED task: it reopens on a fresh attempt and its TASK_FAILED incident closes. */
export async function retryTask(ctx: EngineContext, actor: Actor, id: string): Promise<TaskView> {
  requireAdmin(actor, 'retry a task');
  const retried = await transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, id);
    assertNotRetired(task);
    if (task.state !== 'FAILED') {
      throw invalid(`Only a FAILED task can be retried; this one is ${task.state}.`, 'id', task.state);
    }
    if (task.boundary === 'FAILURE') {
      throw invalid(
        'This task failed through its on_failure boundary and the process went on from there; it cannot be retried.',
        'id',
        'boundary taken',
      );
    }
    if (task.errorType === 'TOOL_OUTCOME_UNKNOWN') {
      throw invalid(
        'This task waits for a person to resolve its TOOL_OUTCOME_UNKNOWN incident; resolve that instead.',
        'id',
        'resolve the incident',
      );
    }
    const next = task.attempt + 1;
    const [row] = await tx
      .update(externalTasks)
      .set({
        state: 'OPEN',
        attempt: next,
        maxAttempts: Math.max(task.maxAttempts, next),
        leaseExpiries: 0,
        deferrals: 0,
        availableAt: sql`now()`,
        endedAt: null,
        updatedAt: sql`now()`,
      })
      .where(eq(externalTasks.id, task.id))
      .returning();
    const label = actorLabel(actor);
    await closeTaskFailedIncidents(tx, task.id, label);
    await appendHistory(tx, { ...attemptHistory(task, label), eventType: 'TASK_RETRIED', attempt: next });
    await notifyTask(tx, task, 'OPEN');
    return row;
  });
  return taskView(retried);
}

/** The secret of a tool server bound to the task, only for the worker holding the live lease. */
export async function toolCredential(
  ctx: EngineContext,
  actor: Actor,
  taskId: string,
  server: string,
  workerId: string,
) {
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only the worker holding the lease can read tool credentials.');
  return transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, taskId);
    assertLease(task, actor, workerId, task.attempt);
    const binding = task.agentWork?.toolBindings.find((b) => b.server === server);
    if (!binding)
      throw new EngineError('BINDING_NOT_FROZEN', `No tool of server "${server}" is bound to this task.`);
    if (!binding.credential)
      throw new EngineError(
        'NOT_FOUND',
        `Server "${server}" names no credential in this definition version.`,
      );
    const secret = await readCredential(tx, ctx, task.projectId, binding.credential);
    if (secret === null)
      throw new EngineError(
        'NOT_FOUND',
        `Credential "${binding.credential}" is not set; an admin sets it with setCredential.`,
      );
    return { server, name: binding.credential, secret, env: binding.credentialEnv };
  });
}
