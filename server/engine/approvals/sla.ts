/**
 * The approval sweeps, run every ABADA_SLA_SWEEP_INTERVAL_MS: the SLA escalation, and the pending
 * timeout (SPEC §11, `approval_timeout_hours`).
 */
import { and, eq, lte, sql } from 'drizzle-orm';
import { transaction } from '../../db/pg.js';
import { approvals, externalTasks } from '../../db/schema.js';
import { type EngineContext, query, startBackgroundRunner } from '../common/index.js';
import { notify } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { approvalHistoryBase, expireApproval } from './withdraw.js';

const SLA_LOCK = 0x4abada + 1;

/**
 * Marks overdue approvals escalated (TASK_SLA_BREACHED; candidates unchanged); returns how many. Under a
 * transaction advisory lock (pg_try_advisory_xact_lock), so of processes ticking together only one works.
 */
export async function sweepSla(ctx: EngineContext): Promise<number> {
  return transaction(ctx.db, async (tx) => {
    const [{ locked }] = await query<{ locked: boolean }>(
      tx,
      sql`SELECT pg_try_advisory_xact_lock(${SLA_LOCK}) AS locked`,
    );
    if (!locked) return 0;
    const due = await tx
      .update(approvals)
      .set({ escalated: true, escalatedAt: sql`now()` })
      .where(
        and(
          eq(approvals.state, 'PENDING'),
          eq(approvals.escalated, false),
          lte(approvals.slaDueAt, sql`now()`),
        ),
      )
      .returning();
    for (const a of due) {
      await appendHistory(tx, {
        ...approvalHistoryBase(a, 'engine'),
        eventType: 'TASK_SLA_BREACHED',
        data: { slaDueAt: a.slaDueAt?.toISOString() ?? null, candidateGroups: a.candidateGroups },
      });
      await notify(tx, { type: 'approval', approvalId: a.id, projectId: a.projectId, change: 'escalated' });
    }
    return due.length;
  });
}

/**
 * Expires the PENDING approvals past their timeout; returns how many. Each in its own transaction under
 * the decision's lock order (task, then approval): a racing decision lands first or gets ALREADY_DECIDED.
 */
export async function sweepExpired(ctx: EngineContext, batch = 50): Promise<number> {
  const due = await ctx.db
    .select({ id: approvals.id, taskId: approvals.taskId })
    .from(approvals)
    .where(and(eq(approvals.state, 'PENDING'), lte(approvals.expiresAt, sql`now()`)))
    .limit(batch);
  let expired = 0;
  for (const d of due) {
    const done = await transaction(ctx.db, async (tx) => {
      const [task] = await tx
        .select()
        .from(externalTasks)
        .where(eq(externalTasks.id, d.taskId))
        .for('update');
      const [a] = await tx.select().from(approvals).where(eq(approvals.id, d.id)).for('update');
      // decided, retired or revoked meanwhile: nothing to do
      if (!task || !a || a.state !== 'PENDING' || !a.expiresAt || a.expiresAt.getTime() > Date.now())
        return false;
      await expireApproval(tx, task, a);
      return true;
    });
    if (done) expired++;
  }
  return expired;
}

/**
 * Runs both sweeps, then the `others` (the timeout boundaries, which sit above approvals); a failed
 * round goes to `onError`. Returns stop().
 */
export function startSweeps(
  ctx: EngineContext,
  onError: (e: unknown) => void,
  others: ((ctx: EngineContext) => Promise<unknown>)[] = [],
): () => void {
  const round = async () => {
    await sweepSla(ctx);
    await sweepExpired(ctx);
    for (const sweep of others) await sweep(ctx);
  };
  return startBackgroundRunner(ctx, round, { intervalMs: ctx.config.slaSweepIntervalMs, onError });
}
