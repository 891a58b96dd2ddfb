/**
 * stepByIdempotencyKey (SPEC §15.6): which steps hold an idempotency key, how it ended, and how many
 * times the engine let it be sent, to diagnose a duplicate from our own records. Several steps hold one
 * when a later attempt reuses a STARTED write's key (reuse.ts). Sends as the engine sees them: the
 * STARTED that created the key, each STARTED that reused it, each lease taken on a holder's attempt while
 * it was STARTED (the new holder sends again with the key); not a worker's retries inside one lease, nor
 * a step answered from a COMPLETED one (`reused`).
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import { externalTasks, type HistoryEventRow, historyEvents, type StepRow, steps } from '../../db/schema.js';
import { type Actor, type EngineContext, sameProject } from '../common/index.js';
import { toStepView } from './views.js';

export interface KeySend {
  reason: 'CREATED' | 'REUSED' | 'LEASE';
  attempt: number;
  sequence: number;
  at: Date;
  workerId: string | null;
}

const ENDS = new Set(['STEP_COMPLETED', 'STEP_FAILED', 'STEP_OUTCOME_UNKNOWN']);
const LEASES = new Set(['TASK_LEASED', 'TASK_LEASE_REACQUIRED']);

/** The step that holds `key` and its sends, or null when no step the actor may see holds it. */
export async function stepByIdempotencyKey(ctx: EngineContext, actor: Actor, key: string) {
  const rows = await ctx.db
    .select()
    .from(steps)
    .where(eq(steps.idempotencyKey, key))
    .orderBy(asc(steps.attempt), asc(steps.sequence))
    .limit(100);
  if (rows.length === 0) return null;
  const [task] = await ctx.db
    .select({ projectId: externalTasks.projectId, processInstanceId: externalTasks.processInstanceId })
    .from(externalTasks)
    .where(eq(externalTasks.id, rows[0].taskId));
  if (!task || !sameProject(actor, task.projectId)) return null;
  const events = await ctx.db
    .select()
    .from(historyEvents)
    .where(
      and(
        eq(historyEvents.processInstanceId, task.processInstanceId),
        eq(historyEvents.taskId, rows[0].taskId),
        inArray(historyEvents.attempt, [...new Set(rows.map((r) => r.attempt))]),
      ),
    )
    .orderBy(asc(historyEvents.seq), asc(historyEvents.idx));
  // the write that created the key
  const [origin] = rows;
  return {
    key,
    processInstanceId: task.processInstanceId,
    taskId: origin.taskId,
    attempt: origin.attempt,
    sequence: origin.sequence,
    toolRef: origin.toolRef,
    // COMPLETED when any holder completed, else the latest holder's state (STARTED: open)
    outcome: rows.some((r) => r.state === 'COMPLETED') ? 'COMPLETED' : rows[rows.length - 1].state,
    steps: rows.map((r) => toStepView(ctx, r)),
    sends: rows.flatMap((r, i) => sendsOf(r, i === 0, events)),
  };
}

export type KeyTraceView = NonNullable<Awaited<ReturnType<typeof stepByIdempotencyKey>>>;

/** One holder's sends: its STARTED (unless it was answered from the journal) and the leases while it was open. */
function sendsOf(r: StepRow, created: boolean, events: HistoryEventRow[]): KeySend[] {
  if (!created && r.reused) return [];
  const own = events.filter((e) => e.attempt === r.attempt);
  const startedAt = own.findIndex((e) => e.eventType === 'STEP_STARTED' && e.sequence === r.sequence);
  if (startedAt < 0) return [];
  const endedAt = own.findIndex(
    (e, i) => i > startedAt && ENDS.has(e.eventType) && e.sequence === r.sequence,
  );
  const send = (reason: KeySend['reason'], at: Date, workerId: string | null): KeySend => ({
    reason,
    attempt: r.attempt,
    sequence: r.sequence,
    at,
    workerId,
  });
  const started = own[startedAt];
  const leases = own
    .slice(startedAt + 1, endedAt < 0 ? undefined : endedAt)
    .filter((e) => LEASES.has(e.eventType))
    .map((e) => send('LEASE', e.at, (e.data as { workerId?: string } | null)?.workerId ?? null));
  return [send(created ? 'CREATED' : 'REUSED', started.at, started.actor.replace(/^worker:/, '')), ...leases];
}
