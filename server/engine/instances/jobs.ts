/**
 * Durable background jobs (CHILD_DONE), inserted in the transaction that made them necessary; any engine
 * claims one with FOR UPDATE SKIP LOCKED, and running it twice is harmless (each kind is idempotent).
 */
import { sql } from 'drizzle-orm';
import { startBackgroundRunner, type EngineContext, query } from '../common/index.js';
import { childDone } from './delegation.js';
import { savepoint, transaction } from '../../db/pg.js';

export async function runJobs(ctx: EngineContext, batch = 20): Promise<number> {
  let done = 0;
  for (;;) {
    const n = await transaction(ctx.db, async (tx) => {
      const jobs = await query<{ id: string; kind: string; payload: Record<string, unknown> }>(
        tx,
        sql`SELECT id, kind, payload FROM jobs WHERE state = 'PENDING' AND run_at <= now()
            ORDER BY run_at LIMIT ${batch} FOR UPDATE SKIP LOCKED`,
      );
      for (const job of jobs) {
        try {
          await savepoint(tx, async (sp) => {
            if (job.kind === 'CHILD_DONE') await childDone(sp, ctx, String(job.payload.childInstanceId));
          });
          await tx.execute(sql`UPDATE jobs SET state = 'DONE', attempts = attempts + 1 WHERE id = ${job.id}`);
        } catch (e) {
          const msg = e instanceof Error ? e.message.slice(0, 500) : 'failed';
          await tx.execute(
            sql`UPDATE jobs SET attempts = attempts + 1, last_error = ${msg},
                  state = CASE WHEN attempts + 1 >= 10 THEN 'FAILED' ELSE 'PENDING' END,
                  run_at = now() + make_interval(secs => least(power(2, attempts + 1), 300))
                WHERE id = ${job.id}`,
          );
        }
      }
      return jobs.length;
    });
    done += n;
    if (n < batch) return done;
  }
}

/** Runs jobs when one is announced (NOTIFY) and every few seconds for retries. */
export function startJobRunner(ctx: EngineContext, onError: (e: unknown) => void, intervalMs = 2000) {
  return startBackgroundRunner(ctx, () => runJobs(ctx), {
    intervalMs,
    wakes: (e) => e.type === 'job',
    runAtStart: true,
    onError,
  });
}
