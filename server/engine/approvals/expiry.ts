/**
 * The pending timeout (SPEC §11, `approval_timeout_hours`): a PENDING approval with no decision by its
 * `expires_at` becomes EXPIRED and counts as a rejection — the step REJECTED with "Rejected: no decision
 * before <time>.", which the model reads, and the task handed out again on the same attempt. Each
 * approval is settled in its own transaction under the decision's lock order (task, then approval), so a
 * decision racing the sweep either lands first or finds the approval EXPIRED (ALREADY_DECIDED).
 */
import { withdrawApproval } from './withdraw.js';
import { and, eq, lte, sql } from 'drizzle-orm';
import { approvals, externalTasks, type ApprovalRow } from '../../db/schema.js';
import type { EngineContext, Executor } from '../common/index.js';
import { transaction } from '../../db/pg.js';

/** Expires the PENDING approvals past their timeout; returns how many. */
export async function sweepExpired(ctx: EngineContext, batch = 50): Promise<number> {
  const due = await ctx.db
    .select({ id: approvals.id, taskId: approvals.taskId })
    .from(approvals)
    .where(and(eq(approvals.state, 'PENDING'), lte(approvals.expiresAt, sql`now()`)))
    .limit(batch);
  let expired = 0;
  for (const d of due) if (await expireOne(ctx, d.id, d.taskId)) expired++;
  return expired;
}

async function expireOne(ctx: EngineContext, approvalId: string, taskId: string): Promise<boolean> {
  return transaction(ctx.db, async (tx) => {
    const [task] = await tx.select().from(externalTasks).where(eq(externalTasks.id, taskId)).for('update');
    const [a] = await tx.select().from(approvals).where(eq(approvals.id, approvalId)).for('update');
    // decided, retired or revoked meanwhile: nothing to do
    if (!task || !a || a.state !== 'PENDING' || !a.expiresAt || a.expiresAt.getTime() > Date.now())
      return false;
    await expireApproval(tx, task, a);
    return true;
  });
}

/**
 * A PENDING approval past its timeout becomes EXPIRED: the sweep does it, and so does a person acting
 * on it (SPEC §14.4), under the caller's locks (task, then approval).
 */
export function expireApproval(
  ex: Executor,
  task: Parameters<typeof withdrawApproval>[1],
  a: ApprovalRow,
): Promise<ApprovalRow> {
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
