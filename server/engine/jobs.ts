/**
 * Durable background jobs (CHILD_DONE today). A job is inserted in the transaction that made it
 * necessary, so it exists exactly when that change committed; any engine process may run it, claiming
 * it with FOR UPDATE SKIP LOCKED, and running it twice is harmless (each kind is idempotent).
 */
import { sql } from 'drizzle-orm';
import type { EngineEvent } from '../db/notify.js';
import type { EngineContext } from './context.js';
import { query } from './context.js';
import { childDone } from './delegation.js';

export async function runJobs(ctx: EngineContext, batch = 20): Promise<number> {
  let done = 0;
  for (;;) {
    const n = await ctx.db.transaction(async (tx) => {
      const jobs = await query<{ id: string; kind: string; payload: Record<string, unknown> }>(
        tx,
        sql`SELECT id, kind, payload FROM jobs WHERE state = 'PENDING' AND run_at <= now()
            ORDER BY run_at LIMIT ${batch} FOR UPDATE SKIP LOCKED`,
      );
      for (const job of jobs) {
        try {
          await tx.transaction(async (sp) => {
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

/**
 * Runs `work` when an event `wakes` it (NOTIFY) and every `intervalMs` (retries, missed events). Runs never
 * overlap in one process; a wake-up during a run schedules exactly one more run after it. Returns stop().
 */
export function startBackgroundRunner(
  ctx: EngineContext,
  work: () => Promise<unknown>,
  opts: {
    intervalMs: number;
    wakes: (e: EngineEvent) => boolean;
    runAtStart?: boolean;
    onError?: (e: unknown) => void;
  },
): () => void {
  let running = false;
  let again = false;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    work()
      .catch(opts.onError ?? (() => {}))
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          tick();
        }
      });
  };
  const onEvent = (e: EngineEvent) => {
    if (opts.wakes(e)) tick();
  };
  ctx.notifier?.on('event', onEvent);
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();
  if (opts.runAtStart) tick();
  return () => {
    stopped = true;
    clearInterval(timer);
    ctx.notifier?.off('event', onEvent);
  };
}

/** Runs jobs when one is announced (NOTIFY) and every few seconds for retries. */
export function startJobRunner(ctx: EngineContext, intervalMs = 2000): () => void {
  return startBackgroundRunner(ctx, () => runJobs(ctx), {
    intervalMs,
    wakes: (e) => e.type === 'job',
    runAtStart: true,
  });
}
