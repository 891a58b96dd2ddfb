/**
 * Fetch-and-lock and the lease (SPEC §3). The claim is one statement; long polling waits on NOTIFY (or
 * on a timer set to the next moment a lease expires or a retry comes due), never on a sleeping loop.
 */
import { sql } from 'drizzle-orm';
import { execute, transaction } from '../../db/pg.js';
import { stepFromRecord as toStepRow } from '../../db/rows.js';
import type { ExternalTaskRow } from '../../db/schema.js';
import {
  CLAIM_ALL,
  CLAIM_READY,
  type Claimed,
  type ClaimedColumns,
  CLAIMED_BEFORE,
} from '../../db/statements/claim.js';
import {
  type EngineEvent,
  type Actor,
  type EngineContext,
  type Executor,
  type Tx,
  query,
} from '../common/index.js';
import { EngineError } from '../../errors.js';
import { attemptHistory, settleUnknownOutcomes } from '../lease/index.js';
import { failTaskAttempt } from './attempt.js';
import { appendHistory } from '../history/index.js';
import { loadEarlierWrites, loadSteps, toStepView } from '../journal/index.js';
import { heartbeat, recordRejection } from '../workers/index.js';
import { traceClaims } from '../../telemetry/index.js';

export interface FetchInput {
  workerId: string;
  maxTasks: number;
  topics: { topicName: string; lockDurationMs: number }[];
  asyncResponseTimeoutMs?: number | null;
  projectId?: string | null;
  /** the worker's id for this request: the same request re-sent (no answer came) gets the same claim back */
  requestId?: string | null;
}

const MAX_LONG_POLL_MS = 60_000;

function validateFetch(input: FetchInput) {
  const errors: { path: string; message: string }[] = [];
  if (!input.workerId || input.workerId.length > 200)
    errors.push({ path: 'workerId', message: '1 to 200 characters' });
  if (!Number.isInteger(input.maxTasks) || input.maxTasks < 1 || input.maxTasks > 100)
    errors.push({ path: 'maxTasks', message: 'an integer from 1 to 100' });
  if (input.topics.length === 0 || input.topics.length > 50)
    errors.push({ path: 'topics', message: '1 to 50 topics' });
  input.topics.forEach(({ lockDurationMs: ms }, i) => {
    if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000)
      errors.push({ path: `topics[${i}].lockDurationMs`, message: 'from 100 ms to 1 hour' });
  });
  if (input.requestId != null && (input.requestId.length < 1 || input.requestId.length > 200))
    errors.push({ path: 'requestId', message: '1 to 200 characters' });
  const wait = input.asyncResponseTimeoutMs ?? 0;
  if (!Number.isInteger(wait) || wait < 0 || wait > MAX_LONG_POLL_MS)
    errors.push({ path: 'asyncResponseTimeoutMs', message: `from 0 to ${MAX_LONG_POLL_MS}` });
  if (errors.length)
    throw new EngineError(
      'VALIDATION_FAILED',
      `fetchAndLock input is invalid: ${errors[0].path} must be ${errors[0].message}.`,
      { errors },
    );
}

/** Claims up to maxTasks tasks of the requested topics; waits up to asyncResponseTimeoutMs for work. */
export async function fetchAndLock(
  ctx: EngineContext,
  actor: Actor,
  input: FetchInput,
  signal?: AbortSignal,
): Promise<LeasedTaskView[]> {
  validateFetch(input);
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only a worker credential can fetch tasks.');
  const missing = input.topics
    .map((t) => t.topicName)
    .filter((t) => !actor.topics.includes(t) && !actor.topics.includes('*'));
  let projectId = input.projectId ?? null;
  if (actor.projectId !== null) {
    if (projectId !== null && projectId !== actor.projectId) missing.push(`project ${projectId}`);
    projectId = actor.projectId;
  }
  if (missing.length > 0) {
    await recordRejection(ctx, actor, input.workerId, { reason: 'no capability', topics: missing });
    throw new EngineError(
      'FORBIDDEN',
      `This worker credential holds no capability for ${missing.join(', ')}. Ask an admin for a principal with those topics.`,
    );
  }
  await heartbeat(ctx, actor, input.workerId);
  if (input.requestId) {
    // A fetch re-sent because its answer was lost (SPEC §3) gets the live leases it took back as they
    // were; claiming other tasks would let those lapse unworked, each lapse counting toward
    // ABADA_MAX_LEASE_EXPIRIES. One read outside any transaction: nothing else touches these leases.
    const again = await execute(ctx.db, CLAIMED_BEFORE, [input.requestId, input.workerId, actor.principalId]);
    if (again.length > 0) return leasedViews(ctx.db, ctx, again);
  }
  const deadline = Date.now() + (input.asyncResponseTimeoutMs ?? 0);
  for (;;) {
    const t0 = new Date();
    const tasks = await claim(ctx, actor, input, projectId);
    traceClaims(input.workerId, tasks, t0);
    if (tasks.length > 0 || Date.now() >= deadline || signal?.aborted) return tasks;
    await waitForWork(ctx, input, projectId, deadline, signal);
    if (signal?.aborted) return [];
  }
}

async function claim(ctx: EngineContext, actor: Actor, input: FetchInput, projectId: string | null) {
  // topics, lease lengths, project, maxTasks, worker, principal, request
  const values = [
    input.topics.map((t) => t.topicName),
    input.topics.map((t) => t.lockDurationMs),
    projectId,
    Math.min(100, Math.max(1, Math.trunc(input.maxTasks))),
    input.workerId,
    actor.principalId,
    input.requestId ?? null,
  ];
  // Ready work and no expired lease on the topics (nearly every fetch): one statement, its own transaction.
  const fast = await execute(ctx.db, CLAIM_READY, values);
  const leased = fast.filter((r) => r.id !== null);
  if (leased.length > 0) return leasedViews(ctx.db, ctx, leased);
  if (!fast.some((r) => r.any_expired)) return [];
  return transaction(ctx.db, async (tx) => {
    const rows = await execute(tx, CLAIM_ALL, values);
    const handed: typeof rows = [];
    for (const r of rows) {
      if (r.was_expired && (await reacquireIsBlocked(tx, ctx, r))) continue;
      handed.push(r);
    }
    if (handed.length === 0) return [];
    await appendHistory(
      tx,
      ...handed
        .filter((r) => r.was_expired)
        .map((r) => ({
          ...attemptHistory(r, `worker:${input.workerId}`),
          eventType: 'TASK_LEASE_REACQUIRED',
          data: { workerId: input.workerId, leaseExpiresAt: new Date(r.leaseExpiresAt!).toISOString() },
        })),
    );
    return leasedViews(tx, ctx, handed);
  });
}

/** What the worker gets: each task with its variables, agent work, current steps and earlier writes. */
async function leasedViews(tx: Executor, ctx: EngineContext, handed: (ClaimedColumns & Claimed)[]) {
  // the claim statement read each task's steps; a re-acquired lease may just have changed them
  const reacquired = handed.filter((r) => r.was_expired).map((r) => r.id);
  const steps = await loadSteps(tx, ctx, reacquired, { currentAttemptOnly: true });
  const out = [];
  for (const r of handed) {
    out.push({
      id: r.id,
      topicName: r.topicName,
      projectId: r.projectId,
      processInstanceId: r.processInstanceId,
      nodeId: r.nodeId,
      attempt: r.attempt,
      leaseExpiresAt: new Date(r.leaseExpiresAt!),
      variables: r.instance_variables ?? {},
      agentWork: r.agentWork,
      // the instance's trace context (docs/tracing.md): each attempt joins the instance's trace
      traceparent: r.instance_traceparent,
      steps: r.was_expired
        ? steps.filter((s) => s.taskId === r.id && s.attempt === r.attempt)
        : (r.current_steps ?? []).map((s) => toStepView(ctx, toStepRow(s))),
      earlierWrites: await loadEarlierWrites(tx, ctx, r.id, r.attempt),
    });
  }
  return out;
}

export type LeasedTaskView = Awaited<ReturnType<typeof leasedViews>>[number];

/**
 * A task whose lease expired is not handed out again when (a) it expired too often on this attempt (poison
 * work: it fails LEASE_EXPIRED) or (b) a keyless write was in flight (never re-sent: OUTCOME_UNKNOWN).
 */
async function reacquireIsBlocked(tx: Tx, ctx: EngineContext, r: ExternalTaskRow): Promise<boolean> {
  if (r.leaseExpiries >= ctx.config.maxLeaseExpiries) {
    await failTaskAttempt(tx, r, {
      errorType: 'LEASE_EXPIRED',
      errorMessage: `the lease expired ${r.leaseExpiries} times on attempt ${r.attempt} without the task finishing`,
      actor: 'engine',
    });
    return true;
  }
  return (await settleUnknownOutcomes(tx, r, 'engine', { reacquire: true })) > 0;
}

/** Waits for a task-ready event on one of the topics, the next due time, the deadline or an abort. */
async function waitForWork(
  ctx: EngineContext,
  input: FetchInput,
  projectId: string | null,
  deadline: number,
  signal?: AbortSignal,
) {
  const topics = new Set(input.topics.map((t) => t.topicName));
  // Only work this caller may claim: another project's due work would wake it every few milliseconds.
  const projectFilter = projectId === null ? sql`TRUE` : sql`project_id = ${projectId}`;
  const [due] = await query<{ next_due: Date | null }>(
    ctx.db,
    sql`SELECT LEAST(
          (SELECT min(lease_expires_at) FROM external_tasks WHERE state = 'LEASED' AND topic_name = ANY(${sql.param([...topics])}::text[]) AND ${projectFilter}),
          (SELECT min(available_at) FROM external_tasks WHERE state = 'OPEN' AND topic_name = ANY(${sql.param([...topics])}::text[]) AND ${projectFilter})
        ) AS next_due`,
  );
  const nextDue = due?.next_due ? new Date(due.next_due).getTime() : Number.POSITIVE_INFINITY;
  const until = Math.min(deadline, Math.max(nextDue + 5, Date.now() + 5));
  const notifier = ctx.notifier;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      notifier?.off('event', onEvent);
      notifier?.off('ready', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const onEvent = (e: EngineEvent) => {
      if (e.type !== 'task' || e.state !== 'OPEN' || !topics.has(e.topic)) return;
      if (projectId === null || e.projectId === projectId) done();
    };
    const timer = setTimeout(done, Math.max(until - Date.now(), 0));
    notifier?.on('event', onEvent);
    // After the LISTEN connection comes back, events sent while it was down are lost: look again.
    notifier?.on('ready', done);
    signal?.addEventListener('abort', done);
  });
}
