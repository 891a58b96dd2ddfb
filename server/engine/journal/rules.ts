/**
 * The step journal (SPEC §4). `journalStep` locks only the external-task row, never advances the
 * process, and checks in order: the caller holds the live lease; the attempt is current; the sequence is
 * the next one (the previous step ended) or an existing step; the tool ref is a frozen binding; limits.
 *
 * A step's life: PROPOSED → APPROVED | REJECTED; APPROVED → STARTED; STARTED → COMPLETED | FAILED |
 * OUTCOME_UNKNOWN. Re-sending a step in the same or an earlier state of its life with the same digest is
 * answered from the journal (idempotent replay); anything else for an existing sequence is DIVERGENT_STEP.
 */
import { and, eq } from 'drizzle-orm';
import { steps } from '../../db/schema.js';
import type { StepRow } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import type { ToolBinding } from '../definitions/index.js';
import { openApproval } from '../approvals/index.js';
import { toolCallDigest } from '../../shared/canonical.js';
import type { Actor, EngineContext } from '../common/index.js';
import { startDelegation } from '../instances/index.js';
import { appendHistory } from '../history/index.js';
import type { AgentWork } from '../definitions/index.js';
import { assertLease, type LockedTaskRow } from '../lease/index.js';
import { assertWithinLimits, hasLimits, priceUsage, priceUsageCached, type Usage } from './limits.js';
import { argumentsOf, digestOf, idempotencyKeyFor, invalid } from './input.js';
import type { ModelUsage, StepStore } from './store.js';
import { findReusable } from './reuse.js';
import { type StepView, toStepView } from './views.js';

export type StepKind = StepRow['kind'];
export type StepState = StepRow['state'];

export interface JournalStepInput {
  taskId: string;
  workerId: string;
  attempt: number;
  sequence: number;
  kind: StepKind;
  state: StepState;
  toolRef?: string | null;
  model?: string | null;
  request: unknown;
  response?: unknown;
  usage?: Usage | null;
  error?: string | null;
}

export interface JournalResult {
  step: StepView;
  idempotencyKey: string | null;
  reused: boolean;
  taskState: LockedTaskRow['state'];
}

/** Position of each state in a step's life; a re-sent earlier state is a replay, not a change. */
const LIFE: Record<StepState, number> = {
  PROPOSED: 0,
  APPROVED: 1,
  REJECTED: 1,
  STARTED: 2,
  COMPLETED: 3,
  FAILED: 3,
  OUTCOME_UNKNOWN: 3,
};
const ENDED: ReadonlySet<StepState> = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'OUTCOME_UNKNOWN']);

/** Checks that need no database: who may journal, payload size, sequence shape. */
export function precheck(ctx: EngineContext, actor: Actor, input: JournalStepInput) {
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only a worker credential can journal steps.');
  const size = Buffer.byteLength(
    JSON.stringify([input.request ?? null, input.response ?? null, input.error ?? null]),
    'utf8',
  );
  if (size > ctx.config.maxPayloadBytes) {
    throw new EngineError(
      'PAYLOAD_TOO_LARGE',
      `The step payload is ${size} bytes; the limit is ${ctx.config.maxPayloadBytes}. Trim tool results before journaling them.`,
      {
        limitBytes: ctx.config.maxPayloadBytes,
      },
    );
  }
  if (!Number.isInteger(input.sequence) || input.sequence < 1)
    throw invalid('sequence starts at 1 and counts up by one per step.', 'sequence');
}

export async function journalStepTx(
  store: StepStore,
  ctx: EngineContext,
  actor: Actor,
  input: JournalStepInput,
): Promise<JournalResult> {
  const withUsage = input.kind === 'MODEL_CALL' && input.state === 'STARTED';
  const { task, existing, last, usage } = await store.read(
    actor,
    input.taskId,
    input.attempt,
    input.sequence,
    withUsage,
  );
  // A proposal re-sent after the task parked (the worker crashed before reading our answer) gets the
  // stored answer: the lease was handed back by the proposal itself. So does any step this worker
  // journaled before it in the same attempt, re-sent unchanged (e.g. a journalSteps batch ending in the
  // proposal, sent again because its answer was lost).
  if (
    existing &&
    task.attempt === input.attempt &&
    task.workerId === input.workerId &&
    task.leasedBy === actor.principalId &&
    task.state !== 'LEASED' &&
    existing.kind === input.kind &&
    existing.toolRef === (input.kind === 'TOOL_CALL' ? (input.toolRef ?? null) : existing.toolRef) &&
    (input.state === existing.state || LIFE[input.state] < LIFE[existing.state])
  ) {
    const digest =
      existing.kind === 'TOOL_CALL'
        ? toolCallDigest(existing.toolRef ?? '', argumentsOf(input.request))
        : digestOf(input, null).digest;
    // Only the same step is a re-send; a different one falls through to the lease check.
    if (digest === existing.digest) return answer(ctx, existing, task.state);
  }
  assertLease(task, actor, input.workerId, input.attempt);
  const work = task.agentWork as AgentWork | null;
  if (existing) return transition(store, ctx, task, existing, input, digestOf(input, work).digest);
  // SPEC §4 order: the sequence is checked before the binding (and the limits).
  const next = (last?.sequence ?? 0) + 1;
  if (input.sequence !== next) {
    throw new EngineError(
      'SEQUENCE_OUT_OF_ORDER',
      `The next step of attempt ${input.attempt} is ${next}, not ${input.sequence}.`,
      { expectedSequence: next },
    );
  }
  if (last && !ENDED.has(last.state)) {
    throw new EngineError(
      'SEQUENCE_OUT_OF_ORDER',
      `Step ${last.sequence} is still ${last.state}; finish it before journaling step ${input.sequence}.`,
      {
        expectedSequence: last.sequence,
      },
    );
  }
  const { digest, binding } = digestOf(input, work);
  return create(store, ctx, task, input, digest, binding, work, usage);
}

async function answer(
  ctx: EngineContext,
  row: StepRow,
  taskState: LockedTaskRow['state'],
): Promise<JournalResult> {
  return { step: toStepView(ctx, row), idempotencyKey: row.idempotencyKey, reused: row.reused, taskState };
}

function history(
  task: LockedTaskRow,
  actorId: string,
  row: Pick<StepRow, 'sequence' | 'state' | 'kind' | 'toolRef' | 'model' | 'digest' | 'reused'>,
  extra: Record<string, unknown> = {},
) {
  return {
    projectId: task.projectId,
    processInstanceId: task.processInstanceId,
    eventType: `STEP_${row.state}`,
    actor: actorId,
    taskId: task.id,
    attempt: task.attempt,
    sequence: row.sequence,
    data: {
      kind: row.kind,
      toolRef: row.toolRef,
      model: row.model,
      digest: row.digest,
      reused: row.reused || undefined,
      ...extra,
    },
  };
}

/** A change to an existing step: replay, completion of a started call, or resumption of an approved one. */
async function transition(
  store: StepStore,
  ctx: EngineContext,
  task: LockedTaskRow,
  e: StepRow,
  input: JournalStepInput,
  digest: string,
): Promise<JournalResult> {
  if (e.kind !== input.kind || digest !== e.digest) {
    throw new EngineError(
      'DIVERGENT_STEP',
      e.state === 'APPROVED'
        ? `Step ${e.sequence} was approved for different arguments; run exactly the approved call (digest ${e.digest}).`
        : `Step ${e.sequence} is already journaled with a different request; replay it exactly or continue at the next sequence.`,
      { sequence: e.sequence, digest: e.digest },
    );
  }
  if (input.state === e.state || LIFE[input.state] < LIFE[e.state]) return answer(ctx, e, task.state);
  const who = `worker:${input.workerId}`;
  if (e.state === 'PROPOSED') {
    throw new EngineError(
      'APPROVAL_REQUIRED',
      `Step ${e.sequence} waits for a person's approval; it cannot start yet.`,
    );
  }
  if (e.state === 'REJECTED') {
    throw new EngineError(
      'APPROVAL_REQUIRED',
      `Step ${e.sequence} was rejected by a person; it never runs. Feed the rejection to the model.`,
    );
  }
  if (e.state === 'APPROVED' && input.state === 'STARTED') {
    const tx = store.tx;
    const binding = (task.agentWork as AgentWork).toolBindings.find((b) => b.ref === e.toolRef);
    const key =
      binding?.idempotency === 'key'
        ? (e.idempotencyKey ?? idempotencyKeyFor(task.id, task.attempt, e.sequence))
        : null;
    const row = await store.update(
      e,
      { state: 'STARTED', idempotencyKey: key },
      history(task, who, { ...e, state: 'STARTED' }),
    );
    if (binding?.transport === 'delegate') {
      await startDelegation(
        tx,
        ctx,
        task,
        row,
        binding,
        argumentsOf(ctx.sealer.openJson(row.requestEnc)) as Record<string, unknown>,
      );
      return answer(ctx, row, 'AWAITING_CHILD');
    }
    return answer(ctx, row, task.state);
  }
  if (e.state === 'STARTED' && (input.state === 'COMPLETED' || input.state === 'FAILED')) {
    const priced =
      e.kind === 'MODEL_CALL' && input.usage
        ? (priceUsageCached(e.model!, input.usage) ?? (await priceUsage(store.tx, e.model!, input.usage)))
        : null;
    const row = await store.update(
      e,
      {
        state: input.state,
        responseEnc: input.response === undefined ? null : ctx.sealer.sealJson(input.response),
        errorEnc: input.error ? ctx.sealer.sealJson(input.error) : null,
        usage: priced?.usage ?? null,
        costUsd: priced?.costUsd ?? null,
      },
      history(
        task,
        who,
        { ...e, state: input.state },
        priced ? { tokens: priced.usage.totalTokens, costUsd: priced.costUsd } : {},
      ),
    );
    return answer(ctx, row, task.state);
  }
  throw new EngineError(
    'DIVERGENT_STEP',
    `Step ${e.sequence} is ${e.state}; it cannot become ${input.state}.`,
    { sequence: e.sequence, state: e.state },
  );
}

/** A new step at the next sequence. */
async function create(
  store: StepStore,
  ctx: EngineContext,
  task: LockedTaskRow,
  input: JournalStepInput,
  digest: string,
  binding: ToolBinding | null,
  work: AgentWork | null,
  usage: ModelUsage | null,
): Promise<JournalResult> {
  const who = `worker:${input.workerId}`;
  const base = {
    taskId: task.id,
    attempt: task.attempt,
    sequence: input.sequence,
    kind: input.kind,
    toolRef: input.toolRef ?? null,
    policy: binding?.policy ?? null,
    model: input.kind === 'MODEL_CALL' ? input.model! : null,
    digest,
    requestEnc: ctx.sealer.sealJson(input.request),
    keyId: ctx.sealer.currentKeyId,
  };
  const insert = async (values: Partial<typeof steps.$inferInsert> & { state: StepState }) => {
    const [row] = await store.tx
      .insert(steps)
      .values({ ...base, ...values })
      .returning();
    return row;
  };
  if (input.kind === 'MODEL_CALL') {
    if (input.state !== 'STARTED')
      throw invalid(
        'Journal a model call STARTED before calling the model, then COMPLETED or FAILED.',
        'state',
      );
    if (work && hasLimits(work.limits)) {
      // the load sums the usage exactly when the node has limits (journalsql's HAS_LIMITS mirrors hasLimits)
      if (!usage) throw new Error('the usage so far was not read for a node with limits');
      assertWithinLimits(usage, work.limits);
    }
    const row = await store.insert(
      { ...base, state: 'STARTED' },
      history(task, who, { ...base, state: 'STARTED', reused: false }),
    );
    return answer(ctx, row, task.state);
  }
  const b = binding!;
  if (b.policy === 'read') {
    if (input.state !== 'COMPLETED' && input.state !== 'FAILED' && input.state !== 'STARTED') {
      throw invalid('A read is journaled COMPLETED (or FAILED) after it ran.', 'state');
    }
    const values = {
      ...base,
      state: input.state,
      responseEnc: input.response === undefined ? null : ctx.sealer.sealJson(input.response),
      errorEnc: input.error ? ctx.sealer.sealJson(input.error) : null,
    };
    const row = await store.insert(values, history(task, who, { ...values, reused: false }));
    return answer(ctx, row, task.state);
  }
  // only a later attempt can reuse (and only then is the database asked)
  const reusable = task.attempt > 1 ? await findReusable(store.tx, task, input.sequence, digest) : null;
  if (reusable) {
    // An earlier attempt already made (or was allowed to make) this exact call: answer from the journal.
    const values = {
      ...base,
      state: reusable.state,
      responseEnc: reusable.responseEnc,
      idempotencyKey: reusable.idempotencyKey,
      reused: reusable.state !== 'STARTED',
      approvalId: reusable.approvalId,
      comment: reusable.comment,
    };
    const row = await store.insert(
      values,
      history(task, who, values, { from: { attempt: reusable.attempt, sequence: reusable.sequence } }),
    );
    return answer(ctx, row, task.state);
  }
  if (b.policy === 'approval_required') {
    if (input.state !== 'PROPOSED') {
      throw new EngineError(
        'APPROVAL_REQUIRED',
        `${b.ref} needs a person's approval: journal it PROPOSED and let the task go.`,
      );
    }
    const tx = store.tx;
    const row = await insert({ state: 'PROPOSED' });
    const opened = await openApproval(
      tx,
      ctx,
      task,
      row,
      b,
      argumentsOf(input.request) as Record<string, unknown>,
      work!,
    );
    await appendHistory(tx, history(task, who, row, { approvalId: opened.approvalId }));
    const [withApproval] = await tx
      .update(steps)
      .set({ approvalId: opened.approvalId })
      .where(
        and(eq(steps.taskId, row.taskId), eq(steps.attempt, row.attempt), eq(steps.sequence, row.sequence)),
      )
      .returning();
    return answer(ctx, withApproval, 'AWAITING_APPROVAL');
  }
  if (input.state !== 'STARTED') {
    throw invalid(
      `${b.ref} is a write: journal it STARTED before sending it, then COMPLETED or FAILED.`,
      'state',
    );
  }
  const key = b.idempotency === 'key' ? idempotencyKeyFor(task.id, task.attempt, input.sequence) : null;
  // a delegation starts a child process: that needs the database (the batch path re-runs step by step)
  const tx = b.transport === 'delegate' ? store.tx : null;
  const row = await store.insert(
    { ...base, state: 'STARTED', idempotencyKey: key },
    history(task, who, { ...base, state: 'STARTED', reused: false }),
  );
  if (tx) {
    await startDelegation(tx, ctx, task, row, b, argumentsOf(input.request) as Record<string, unknown>);
    return answer(ctx, row, 'AWAITING_CHILD');
  }
  return answer(ctx, row, task.state);
}
