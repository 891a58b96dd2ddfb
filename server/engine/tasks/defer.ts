/**
 * Deferral (SPEC §15.3): a worker hands its lease back without spending an attempt. The task waits in
 * `available_at`, which the claim already filters on. Lease expiries (poison work) are neither counted
 * nor reset: a deferral is a worker saying so, not a lease lapsing. A worker that defers on every lease
 * would hold a task forever, hence ABADA_MAX_DEFERRALS.
 */
import { eq, sql } from 'drizzle-orm';
import { transaction } from '../../db/pg.js';
import { externalTasks } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import type { Actor, EngineContext } from '../common/index.js';
import { notifyTask } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { assertLease, attemptHistory, lockTask, startedWrites } from '../lease/index.js';
import { failTaskAttempt } from './attempt.js';
import type { LeaseReport } from './completion.js';
import { type TaskView, taskView } from './views.js';

export interface DeferInput extends LeaseReport {
  /** why, in a few words (`shutdown`, `rate limited by gpt-4.1-mini`): kept in history */
  reason: string;
  /** not handed out again before this many milliseconds (cut to ABADA_MAX_DEFER_MS) */
  retryAfterMs: number;
}

/** Refused while an attempt's write is STARTED; past ABADA_MAX_DEFERRALS it fails (DEFERRED_TOO_OFTEN). */
export async function deferTask(ctx: EngineContext, actor: Actor, input: DeferInput): Promise<TaskView> {
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only the worker holding the lease can defer a task.');
  if (typeof input.reason !== 'string' || input.reason.trim() === '' || input.reason.length > 500) {
    throw invalid('reason says why the task is deferred, in 1 to 500 characters.', 'reason', 'invalid');
  }
  if (!Number.isInteger(input.retryAfterMs) || input.retryAfterMs < 0) {
    throw invalid(
      'retryAfterMs is a whole number of milliseconds ≥ 0 (0: hand the task out again at once).',
      'retryAfterMs',
      'out of range',
    );
  }
  const { maxDeferMs, maxDeferrals } = ctx.config;
  const delayMs = Math.min(input.retryAfterMs, maxDeferMs);
  const who = `worker:${input.workerId}`;
  const row = await transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, input.taskId);
    assertLease(task, actor, input.workerId, input.attempt);
    // a write STARTED and unsettled: whoever resumes would not know whether it was sent
    const [started] = await startedWrites(tx, task.id, task.attempt);
    if (started) {
      throw invalid(
        `The write ${started.toolRef} (step ${started.sequence}) is STARTED and unsettled; settle it first (journal its outcome), then defer the task.`,
        'taskId',
        'a write is STARTED',
      );
    }
    const deferrals = task.deferrals + 1;
    if (deferrals > maxDeferrals) {
      return failTaskAttempt(tx, task, {
        errorType: 'DEFERRED_TOO_OFTEN',
        errorMessage: `The task was deferred ${deferrals} times on attempt ${task.attempt} (ABADA_MAX_DEFERRALS is ${maxDeferrals}); this deferral counts as a failure of the attempt. Last reason: ${input.reason.slice(0, 200)}`,
        actor: who,
      });
    }
    const [deferred] = await tx
      .update(externalTasks)
      .set({
        state: 'OPEN',
        deferrals,
        workerId: null,
        leasedBy: null,
        leaseExpiresAt: null,
        leaseRequestId: null,
        // at once: the task keeps its place in the queue (it was due when it was leased)
        availableAt:
          delayMs === 0
            ? sql`least(${externalTasks.availableAt}, now())`
            : sql`now() + make_interval(secs => ${delayMs / 1000})`,
        updatedAt: sql`now()`,
      })
      .where(eq(externalTasks.id, task.id))
      .returning();
    await appendHistory(tx, {
      ...attemptHistory(task, who),
      eventType: 'TASK_DEFERRED',
      data: {
        reason: input.reason.slice(0, 500),
        retryAfterMs: delayMs,
        ...(delayMs < input.retryAfterMs ? { requestedMs: input.retryAfterMs } : {}),
        deferrals,
      },
    });
    await notifyTask(tx, task, 'OPEN');
    return deferred;
  });
  return taskView(row);
}
