/**
 * Background sweeps that must run once across all engine processes: each runs under a transaction-level
 * advisory lock taken with pg_try_advisory_xact_lock, so when several processes tick together only one
 * does the work.
 */
import { and, eq, lte, sql } from 'drizzle-orm';
import { approvals } from '../../db/schema.js';
import { type EngineContext, query, startBackgroundRunner } from '../common/index.js';
import { notify } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { sweepExpired } from './expiry.js';
import { transaction } from '../../db/pg.js';

const SLA_LOCK = 0x4abada + 1;

/** Marks overdue approvals escalated (TASK_SLA_BREACHED); candidates do not change. Returns how many. */
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
        projectId: a.projectId,
        processInstanceId: a.processInstanceId,
        eventType: 'TASK_SLA_BREACHED',
        actor: 'engine',
        taskId: a.taskId,
        attempt: a.attempt,
        sequence: a.sequence,
        approvalId: a.id,
        data: { slaDueAt: a.slaDueAt?.toISOString() ?? null, candidateGroups: a.candidateGroups },
      });
      await notify(tx, { type: 'approval', approvalId: a.id, projectId: a.projectId, change: 'escalated' });
    }
    return due.length;
  });
}

/**
 * Runs both sweeps, then the `others` (the timeout boundaries, which sit above approvals), every
 * ABADA_SLA_SWEEP_INTERVAL_MS; a failed round goes to `onError`. Returns stop().
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
  return startBackgroundRunner(ctx, round, {
    intervalMs: ctx.config.slaSweepIntervalMs,
    onError,
  });
}
