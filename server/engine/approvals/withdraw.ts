/**
 * An approval that ends without its call running (revoked by a person, or expired undecided: SPEC §11
 * `approval_timeout_hours`, counted as a rejection) settles one way: its end state, the step REJECTED
 * with the reason the model reads, the task handed out again on the same attempt (parked, or taken but
 * not started), two history rows, the events. One whose work was retired ends RETIRED, no step change.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { approvals, externalTasks, steps, type ApprovalRow, type ExternalTaskRow } from '../../db/schema.js';
import type { Executor } from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import { appendHistory } from '../history/index.js';

export interface Withdrawal {
  state: 'REVOKED' | 'EXPIRED';
  comment: string;
  /** what the model reads as the rejection */
  reason: string;
  /** the history actor: a principal label, or `engine` */
  actor: string;
  /** data of the APPROVAL_<state> history row */
  data: Record<string, unknown>;
}

export async function withdrawApproval(ex: Executor, task: ExternalTaskRow, a: ApprovalRow, w: Withdrawal) {
  const [row] = await ex
    .update(approvals)
    .set({ state: w.state, comment: w.comment })
    .where(eq(approvals.id, a.id))
    .returning();
  await ex
    .update(steps)
    .set({ state: 'REJECTED', comment: w.reason, updatedAt: sql`now()` })
    .where(stepOf(a));
  const handedBack = task.state === 'AWAITING_APPROVAL' || task.state === 'LEASED';
  if (handedBack) {
    await ex
      .update(externalTasks)
      .set({
        state: 'OPEN',
        workerId: null,
        leaseExpiresAt: null,
        availableAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(eq(externalTasks.id, task.id));
  }
  const base = approvalHistoryBase(a, w.actor);
  const change = w.state === 'REVOKED' ? 'revoked' : 'expired';
  await appendHistory(
    ex,
    { ...base, eventType: `APPROVAL_${w.state}`, data: w.data },
    { ...base, eventType: 'STEP_REJECTED', data: { digest: a.digest, [change]: true } },
  );
  await notify(ex, { type: 'approval', approvalId: a.id, projectId: a.projectId, change });
  if (handedBack) await notifyTask(ex, task, 'OPEN');
  return row;
}

/**
 * A PENDING approval past its timeout becomes EXPIRED: the sweep does it, and so does a person acting
 * on it (SPEC §14.4), under the caller's locks (task, then approval).
 */
export function expireApproval(ex: Executor, task: ExternalTaskRow, a: ApprovalRow) {
  const at = a.expiresAt!.toISOString();
  const comment = `Rejected: no decision before ${at}.`;
  return withdrawApproval(ex, task, a, {
    state: 'EXPIRED',
    comment,
    reason: comment,
    actor: 'engine',
    data: { digest: a.digest, expiresAt: at },
  });
}

/** Pending approvals of retired tasks become RETIRED: a late decision then gets WORK_RETIRED. */
export async function retireApprovalsOfTasks(
  tx: Executor,
  taskIds: string[],
  projectId: string,
  actor: string,
): Promise<void> {
  if (taskIds.length === 0) return;
  const retired = await tx
    .update(approvals)
    .set({ state: 'RETIRED', decidedAt: sql`now()` })
    .where(and(inArray(approvals.taskId, taskIds), eq(approvals.state, 'PENDING')))
    .returning();
  for (const a of retired) {
    await appendHistory(tx, {
      projectId,
      processInstanceId: a.processInstanceId,
      eventType: 'APPROVAL_RETIRED',
      actor,
      taskId: a.taskId,
      approvalId: a.id,
      data: { digest: a.digest },
    });
    await notify(tx, { type: 'approval', approvalId: a.id, projectId, change: 'retired' });
  }
}

export function stepOf(s: { taskId: string; attempt: number; sequence: number }) {
  return and(eq(steps.taskId, s.taskId), eq(steps.attempt, s.attempt), eq(steps.sequence, s.sequence));
}

export function approvalHistoryBase(a: ApprovalRow, actor: string) {
  return {
    projectId: a.projectId,
    processInstanceId: a.processInstanceId,
    taskId: a.taskId,
    attempt: a.attempt,
    sequence: a.sequence,
    approvalId: a.id,
    actor,
  };
}
