/**
 * The end of an attempt that did not complete: reported failures, poison leases, invalid output. Writes
 * it left STARTED whose outcome nobody can know are settled first: the task waits for a person.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { externalTasks, incidents, steps, type ExternalTaskRow } from '../../db/schema.js';
import type { AttemptMetadata } from '../../shared/types.js';
import type { Tx } from '../common/index.js';
import { notifyTask } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { openIncident } from '../incidents/index.js';

export interface AttemptFailure {
  errorType: string;
  errorMessage?: string | null;
  retryTimeoutMs?: number | null;
  actor: string;
  /**
   * The node's failure boundary, instead of a TASK_FAILED incident when the last attempt failed (null: it
   * has none). A parameter, not an import: it moves the token, the business of instances, above the lease.
   */
  onExhausted?: (tx: Tx, task: ExternalTaskRow, f: AttemptFailure) => Promise<ExternalTaskRow | null>;
  /** the worker's attempt metadata (errorType included), kept on the task and in history (SPEC §15.5) */
  metadata?: AttemptMetadata | null;
}

/** The failure's metadata for the task row (unchanged without any) and for its history row. */
const metadataOf = (f: AttemptFailure) => (f.metadata ? { metadata: f.metadata } : {});

/** A task row no worker holds. */
const UNLEASED = { workerId: null, leasedBy: null, leaseExpiresAt: null };

/** A task's write calls: the steps whose re-send could repeat a side effect. */
export function writesOf(taskId: string) {
  return and(
    eq(steps.taskId, taskId),
    eq(steps.kind, 'TOOL_CALL'),
    sql`${steps.policy} IN ('write', 'approval_required')`,
  );
}

/**
 * Marks OUTCOME_UNKNOWN, each with an incident, the current attempt's STARTED writes never re-sent blindly:
 * keyless ones and keyed ones whose lookup failed (SPEC §11); a keyless one with a lookup not yet run is
 * left for the next lease (`reacquire`). Returns how many (the caller then parks the task).
 */
export async function settleUnknownOutcomes(
  tx: Tx,
  task: ExternalTaskRow,
  actor: string,
  opts: { reacquire?: boolean } = {},
): Promise<number> {
  const started = await startedWrites(tx, task.id, task.attempt);
  if (started.length === 0) return 0;
  const lookups = await tx
    .select({ sequence: steps.sequence, state: steps.state })
    .from(steps)
    .where(and(eq(steps.taskId, task.id), eq(steps.attempt, task.attempt), eq(steps.purpose, 'LOOKUP')))
    .orderBy(asc(steps.sequence));
  const withLookup = new Set((task.agentWork?.toolBindings ?? []).filter((b) => b.lookup).map((b) => b.ref));
  const unknown = started
    .filter((s) => {
      const after = lookups.filter((l) => l.sequence > s.sequence);
      if (s.key !== null) return after.at(-1)?.state === 'FAILED';
      return !(opts.reacquire && withLookup.has(s.toolRef ?? '') && after.length === 0);
    })
    .map((s) => s.sequence);
  if (unknown.length === 0) return 0;
  const open = await tx
    .update(steps)
    .set({ state: 'OUTCOME_UNKNOWN', updatedAt: sql`now()` })
    .where(and(eq(steps.taskId, task.id), eq(steps.attempt, task.attempt), inArray(steps.sequence, unknown)))
    .returning({
      sequence: steps.sequence,
      toolRef: steps.toolRef,
      digest: steps.digest,
      key: steps.idempotencyKey,
    });
  for (const s of open) {
    const how = s.key ? 'was sent and its lookup failed' : 'was sent without an idempotency key';
    await recordUnknown(tx, task, actor, { ...s, attempt: task.attempt }, how);
  }
  if (open.length > 0) {
    await tx
      .update(externalTasks)
      .set({
        state: 'FAILED',
        errorType: 'TOOL_OUTCOME_UNKNOWN',
        errorMessage: 'waiting for a person to resolve an unknown tool outcome',
        ...UNLEASED,
        updatedAt: sql`now()`,
      })
      .where(eq(externalTasks.id, task.id));
    await notifyTask(tx, task, 'FAILED');
  }
  return open.length;
}

/** A write's STEP_OUTCOME_UNKNOWN row and, given `how` it was sent, the incident that asks a person. */
export async function recordUnknown(
  tx: Tx,
  task: ExternalTaskRow,
  actor: string,
  s: { attempt: number; sequence: number; toolRef: string | null; digest: string },
  how: string | null,
): Promise<void> {
  const at = { taskId: task.id, attempt: s.attempt, sequence: s.sequence };
  await appendHistory(tx, {
    ...attemptHistory(task, actor),
    ...at,
    eventType: 'STEP_OUTCOME_UNKNOWN',
    data: { toolRef: s.toolRef, digest: s.digest },
  });
  if (how === null) return;
  await openIncident(
    tx,
    {
      projectId: task.projectId,
      type: 'TOOL_OUTCOME_UNKNOWN',
      message: `The call ${s.toolRef} (step ${s.sequence}, attempt ${s.attempt}) ${how}, so its outcome is unknown. It will not be re-sent: check ${(s.toolRef ?? '').split('/')[0]} and state whether it happened.`,
      processInstanceId: task.processInstanceId,
      ...at,
    },
    actor,
  );
}

/** The writes of a task's attempt left STARTED, in sequence order: nobody has journaled their outcome. */
export function startedWrites(tx: Tx, taskId: string, attempt: number) {
  return tx
    .select({ sequence: steps.sequence, toolRef: steps.toolRef, key: steps.idempotencyKey })
    .from(steps)
    .where(and(writesOf(taskId), eq(steps.attempt, attempt), eq(steps.state, 'STARTED')))
    .orderBy(asc(steps.sequence));
}

/** Fails the current attempt: retry on attempt+1 after a backoff, or FAILED with a TASK_FAILED incident. */
export async function failAttempt(tx: Tx, task: ExternalTaskRow, f: AttemptFailure) {
  const unknown = await settleUnknownOutcomes(tx, task, f.actor);
  if (unknown > 0) {
    await appendHistory(tx, {
      ...attemptHistory(task, f.actor),
      eventType: 'ATTEMPT_FAILED',
      data: { errorType: f.errorType, waitingFor: 'TOOL_OUTCOME_UNKNOWN', ...metadataOf(f) },
    });
    const [row] = f.metadata
      ? await tx
          .update(externalTasks)
          .set({ metadata: f.metadata })
          .where(eq(externalTasks.id, task.id))
          .returning()
      : await tx.select().from(externalTasks).where(eq(externalTasks.id, task.id));
    return row;
  }
  if (task.attempt < task.maxAttempts) return retryLater(tx, task, f);
  return (await f.onExhausted?.(tx, task, f)) ?? failForGood(tx, task, f);
}

/** The fields every history row of the task's current attempt carries. */
export function attemptHistory(
  task: Pick<ExternalTaskRow, 'id' | 'projectId' | 'processInstanceId' | 'attempt'>,
  actor: string,
) {
  return {
    projectId: task.projectId,
    processInstanceId: task.processInstanceId,
    actor,
    taskId: task.id,
    attempt: task.attempt,
  };
}

/** Attempts left: the task reopens on attempt+1 after the worker's retry timeout or a backoff. */
async function retryLater(tx: Tx, task: ExternalTaskRow, f: AttemptFailure): Promise<ExternalTaskRow> {
  // the default backoff: 1 s, 2 s, 4 s … capped at 5 minutes
  const delay = f.retryTimeoutMs ?? Math.min(1000 * 2 ** Math.max(task.attempt - 1, 0), 5 * 60_000);
  const [row] = await tx
    .update(externalTasks)
    .set({
      state: 'OPEN',
      attempt: task.attempt + 1,
      leaseExpiries: 0,
      deferrals: 0,
      ...UNLEASED,
      availableAt: sql`now() + make_interval(secs => ${delay / 1000})`,
      errorType: f.errorType,
      errorMessage: f.errorMessage ?? null,
      ...metadataOf(f),
      updatedAt: sql`now()`,
    })
    .where(eq(externalTasks.id, task.id))
    .returning();
  await appendHistory(tx, {
    ...attemptHistory(task, f.actor),
    eventType: 'ATTEMPT_FAILED',
    data: { errorType: f.errorType, nextAttempt: task.attempt + 1, retryInMs: delay, ...metadataOf(f) },
  });
  await notifyTask(tx, task, 'OPEN');
  return row;
}

/**
 * Worker errors the incident quotes: the tool contract's (the binding and server's tools, no payload).
 * Others (a model's refusal may echo part of an API key) stay on the task for API readers, not webhooks.
 */
const QUOTED_ERRORS = new Set(['TOOL_CONTRACT_MISMATCH', 'TOOL_NOT_ALLOWED', 'TOOL_TRANSPORT_UNSUPPORTED']);
const quotable = (f: AttemptFailure) =>
  f.errorMessage && QUOTED_ERRORS.has(f.errorType) ? ` (${f.errorMessage.slice(0, 300)})` : '';

/** The last attempt failed: the task is FAILED and a TASK_FAILED incident asks a person to look. */
async function failForGood(tx: Tx, task: ExternalTaskRow, f: AttemptFailure): Promise<ExternalTaskRow> {
  const [row] = await tx
    .update(externalTasks)
    .set({
      state: 'FAILED',
      ...UNLEASED,
      errorType: f.errorType,
      errorMessage: f.errorMessage ?? null,
      ...metadataOf(f),
      updatedAt: sql`now()`,
      endedAt: sql`now()`,
    })
    .where(eq(externalTasks.id, task.id))
    .returning();
  await appendHistory(tx, {
    ...attemptHistory(task, f.actor),
    eventType: 'TASK_FAILED',
    data: { errorType: f.errorType, attempts: task.attempt, ...metadataOf(f) },
  });
  await openIncident(
    tx,
    {
      projectId: task.projectId,
      type: 'TASK_FAILED',
      message: `Task ${task.nodeId} failed on its last attempt (${task.attempt} of ${task.maxAttempts}): ${f.errorType}${quotable(f)}. Fix the cause, then retry the task.`,
      processInstanceId: task.processInstanceId,
      taskId: task.id,
      attempt: task.attempt,
    },
    f.actor,
  );
  await notifyTask(tx, task, 'FAILED');
  return row;
}

/** Closes the open TASK_FAILED incidents of a task (an operator retried it). */
export async function closeTaskFailedIncidents(tx: Tx, taskId: string, by: string): Promise<void> {
  await tx
    .update(incidents)
    .set({ state: 'RESOLVED', resolvedAt: sql`now()`, resolution: { comment: 'task retried', by } })
    .where(and(eq(incidents.taskId, taskId), eq(incidents.type, 'TASK_FAILED'), eq(incidents.state, 'OPEN')));
}
