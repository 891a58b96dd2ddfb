/**
 * The boundaries of agent nodes (SPEC §15.4): the sweep fires due timeouts; the failure boundary takes a
 * task that exhausted its attempts to on_failure instead of an incident. Both lock the task, then the
 * instance, so a racing completion finds the task retired (WORK_RETIRED), or wins and leaves nothing live.
 */
import { eq } from 'drizzle-orm';
import { execute, transaction } from '../../db/pg.js';
import { LOCK_DUE_BOUNDARY } from '../../db/statements/tasks.js';
import { externalTasks, type ExternalTaskRow } from '../../db/schema.js';
import type { EngineContext, Tx } from '../common/index.js';
import { readDefinitionSpec } from '../definitions/index.js';
import { notifyTask } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { type AttemptFailure, attemptHistory } from '../lease/index.js';
import { endedNow, fireTimeout, LIVE_TASK_STATES, lockInstance } from './lifecycle.js';
import { enterNode, findNode } from './start.js';

const LIVE = new Set<string>(LIVE_TASK_STATES);

/**
 * Fires due timeout boundaries, one task per transaction (at most `batch`); returns how many fired. Safe
 * on every engine at once: each task is taken FOR UPDATE SKIP LOCKED and checked again under its locks.
 */
export async function sweepBoundaries(ctx: EngineContext, batch = 50): Promise<number> {
  let fired = 0;
  for (let i = 0; i < batch; i++) {
    const outcome = await transaction(ctx.db, async (tx) => {
      const [due] = await execute(tx, LOCK_DUE_BOUNDARY, []);
      if (!due) return 'none';
      const [task] = await tx.select().from(externalTasks).where(eq(externalTasks.id, due.id));
      const inst = await lockInstance(tx, task.processInstanceId);
      if (!LIVE.has(task.state) || inst?.state !== 'ACTIVE') return 'skipped';
      await fireTimeout(tx, task, inst);
      return 'fired';
    });
    if (outcome === 'none') break;
    if (outcome === 'fired') fired++;
  }
  return fired;
}

/**
 * A task (locked by the caller) failed its last attempt at a node with `on_failure`: FAILED with no
 * incident, BOUNDARY_FAILURE records the error, the token moves there. Null without one (open the incident).
 */
export async function takeFailureBoundary(tx: Tx, task: ExternalTaskRow, f: AttemptFailure) {
  if (task.nodeType !== 'agent') return null;
  const inst = await lockInstance(tx, task.processInstanceId);
  if (inst?.state !== 'ACTIVE') return null;
  const spec = await readDefinitionSpec(tx, inst.definitionId);
  const node = findNode(spec, task.nodeId);
  if (node.type !== 'agent' || !node.onFailure) return null;
  const [row] = await tx
    .update(externalTasks)
    .set({
      state: 'FAILED',
      boundary: 'FAILURE',
      errorType: f.errorType,
      errorMessage: f.errorMessage ?? null,
      ...(f.metadata ? { metadata: f.metadata } : {}),
      ...endedNow(),
    })
    .where(eq(externalTasks.id, task.id))
    .returning();
  await appendHistory(tx, {
    ...attemptHistory(task, f.actor),
    eventType: 'BOUNDARY_FAILURE',
    data: {
      nodeId: node.id,
      attempts: task.attempt,
      errorType: f.errorType,
      errorMessage: f.errorMessage?.slice(0, 2000) ?? null,
      ...(f.metadata ? { metadata: f.metadata } : {}),
      to: node.onFailure,
    },
  });
  await notifyTask(tx, task, 'FAILED');
  await enterNode(tx, inst, spec, node.onFailure, 'engine');
  return row;
}
