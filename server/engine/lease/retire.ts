/** Writes whose outcome nobody will learn once a boundary took the token off their task. */
import { and, asc, eq, sql } from 'drizzle-orm';
import { type ExternalTaskRow, steps } from '../../db/schema.js';
import type { Tx } from '../common/index.js';
import { recordUnknown, writesOf } from './attempts.js';

/**
 * Every write call of the task left STARTED, on any attempt, keyed or not, becomes OUTCOME_UNKNOWN (no
 * lease will send it again) with one incident on its latest row: a later attempt re-sending an earlier
 * one's key is the same call, and a call with any row ended is not unknown. A delegation's step is left
 * as is (its child is cancelled with the task), the task's state to the caller. Returns how many calls.
 */
export async function settleWritesForGood(tx: Tx, task: ExternalTaskRow, actor: string): Promise<number> {
  const rows = await tx
    .select({
      attempt: steps.attempt,
      sequence: steps.sequence,
      state: steps.state,
      toolRef: steps.toolRef,
      digest: steps.digest,
      key: steps.idempotencyKey,
    })
    .from(steps)
    .where(and(writesOf(task.id), sql`${steps.toolRef} NOT LIKE 'delegate:%'`))
    .orderBy(asc(steps.attempt), asc(steps.sequence));
  const ended = new Set(
    rows
      .filter((r) => r.key && ['COMPLETED', 'FAILED', 'OUTCOME_UNKNOWN'].includes(r.state))
      .map((r) => r.key),
  );
  const calls = new Map<string, typeof rows>();
  for (const r of rows) {
    if (r.state !== 'STARTED' || (r.key && ended.has(r.key))) continue;
    const id = r.key ?? `${r.attempt}.${r.sequence}`;
    calls.set(id, [...(calls.get(id) ?? []), r]);
  }
  const how = "was sent before its node's boundary took the process elsewhere";
  for (const call of calls.values()) {
    for (const [i, s] of call.entries()) {
      await tx
        .update(steps)
        .set({ state: 'OUTCOME_UNKNOWN', updatedAt: sql`now()` })
        .where(and(eq(steps.taskId, task.id), eq(steps.attempt, s.attempt), eq(steps.sequence, s.sequence)));
      await recordUnknown(tx, task, actor, s, i === call.length - 1 ? how : null);
    }
  }
  return calls.size;
}
