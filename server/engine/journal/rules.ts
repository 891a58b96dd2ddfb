/**
 * The rules of a step (SPEC §4). `applyStep` takes one journaled step and the call's state (state.ts) and
 * either changes it (a new step, or an existing one's next state, with history rows and effects) or
 * refuses; it never advances the process. Checks in SPEC order: lease, attempt, sequence, frozen binding,
 * limits. A step re-sent in the same or an earlier state with the same digest is answered from the
 * journal; anything else for an existing sequence is DIVERGENT_STEP.
 */
import type { StepRow } from '../../db/schema.js';
import { toolCallDigest } from '../../shared/canonical.js';
import { EngineError, invalid } from '../../errors.js';
import { lapseOf, type Standing } from '../approvals/index.js';
import { type Actor, type EngineContext, idempotencyKeyFor, type Tx } from '../common/index.js';
import type { ToolBinding } from '../definitions/index.js';
import { startDelegation } from '../instances/index.js';
import { assertLease, type LockedTaskRow } from '../lease/index.js';
import { argumentsOf, digestOf, type JournalStepInput } from './input.js';
import type { priceUsage, Usage } from '../prices/index.js';
import { checkLimits } from './limits.js';
import type { Reusable } from './reuse.js';
import { assertNextSequence, bindingOf, checkPrecondition, reconciliation } from './guards.js';
import { propose, refuseByRules } from './propose.js';
import { afterLapse, voidForFacts } from './reopen.js';
import { type JournalState, stepHistory } from './state.js';
import { toStepView } from './views.js';

/** A journaled step as the worker gets it back, with the task's state after the call. */
export type JournalResult = ReturnType<typeof answer>;

/** What the rules may ask of the database beyond the load, in the journal's transaction (rarely). */
export interface RuleReads {
  /** an earlier attempt's same call (SPEC §4 "Later attempts"); sees this call's earlier steps */
  reusable(task: LockedTaskRow, sequence: number, digest: string): Promise<Reusable | null>;
  /** an approval and the standing of the people who decided it (at the start of an approved call) */
  approval(approvalId: string): Promise<Standing | null>;
  /** the engine's price of a model call: the process's price cache, else the database */
  price(model: string, usage: Usage): ReturnType<typeof priceUsage>;
}

/** Position of each state in a step's life; a re-sent earlier state is a replay, not a change. */
const LIFE: Record<StepRow['state'], number> = {
  PROPOSED: 0,
  APPROVED: 1,
  REJECTED: 1,
  STARTED: 2,
  COMPLETED: 3,
  FAILED: 3,
  OUTCOME_UNKNOWN: 3,
};

export async function applyStep(
  j: JournalState,
  ctx: EngineContext,
  actor: Actor,
  reads: RuleReads,
  input: JournalStepInput,
): Promise<JournalResult> {
  const task = j.task;
  const existing = j.step(input.sequence);
  if (existing && isResendAfterPark(task, existing, actor, input)) return answer(ctx, existing, task.state);
  assertLease(task, actor, input.workerId, input.attempt);
  if (existing) return transition(j, ctx, reads, existing, input, digestOf(input, task.agentWork).digest);
  assertNextSequence(j, ctx, input);
  const { digest, binding } = digestOf(input, task.agentWork);
  return create(j, ctx, reads, input, digest, binding);
}

/**
 * A proposal re-sent after the task parked (its answer was lost) gets the stored answer, though the
 * proposal itself handed the lease back; so does any earlier step of the attempt this worker re-sends
 * unchanged (a batch ending in the proposal). A different step falls through to the lease check.
 */
function isResendAfterPark(task: LockedTaskRow, e: StepRow, actor: Actor, input: JournalStepInput): boolean {
  if (
    task.attempt !== input.attempt ||
    task.workerId !== input.workerId ||
    task.leasedBy !== actor.principalId ||
    task.state === 'LEASED' ||
    e.kind !== input.kind ||
    e.toolRef !== (input.kind === 'TOOL_CALL' ? (input.toolRef ?? null) : e.toolRef) ||
    !(input.state === e.state || LIFE[input.state] < LIFE[e.state])
  )
    return false;
  const digest =
    e.kind === 'TOOL_CALL'
      ? toolCallDigest(e.toolRef ?? '', argumentsOf(input.request))
      : digestOf(input, null).digest;
  return digest === e.digest;
}

function answer(ctx: EngineContext, row: StepRow, taskState: LockedTaskRow['state']) {
  return { step: toStepView(ctx, row), idempotencyKey: row.idempotencyKey, reused: row.reused, taskState };
}

/** A change to an existing step: replay, the end of a started call, or the start of an approved one. */
async function transition(
  j: JournalState,
  ctx: EngineContext,
  reads: RuleReads,
  e: StepRow,
  input: JournalStepInput,
  digest: string,
): Promise<JournalResult> {
  const task = j.task;
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
  if (e.state === 'PROPOSED') {
    throw new EngineError(
      'APPROVAL_REQUIRED',
      `Step ${e.sequence} waits for a person's approval; it cannot start yet.`,
    );
  }
  // a write the rules refused at STARTED: the re-sent STARTED is answered from the journal (SPEC §14.2)
  if (e.state === 'REJECTED' && e.policy === 'write' && input.state === 'STARTED')
    return answer(ctx, e, task.state);
  if (e.state === 'REJECTED') {
    throw new EngineError(
      'APPROVAL_REQUIRED',
      `Step ${e.sequence} was rejected by a person; it never runs. Feed the rejection to the model.`,
    );
  }
  if (e.state === 'APPROVED' && input.state === 'STARTED') return startApproved(j, ctx, reads, e, input);
  if (e.state === 'STARTED' && (input.state === 'COMPLETED' || input.state === 'FAILED')) {
    const settled =
      input.state === 'COMPLETED' ? reconciliation(j, ctx, e, bindingOf(task.agentWork, e.toolRef)) : null;
    if (settled) {
      // a started write its lookup found (SPEC §11 Reconciled): COMPLETED with the lookup's answer
      const row = j.put(
        { ...e, ...settled, state: 'COMPLETED', errorEnc: null, reconciled: true, updatedAt: new Date() },
        [stepHistory(task, input.workerId, { ...e, state: 'COMPLETED' }, { reconciled: true })],
      );
      return answer(ctx, row, task.state);
    }
    const priced = e.kind === 'MODEL_CALL' && input.usage ? await reads.price(e.model!, input.usage) : null;
    const spent = priced ? { tokens: priced.usage.totalTokens, costUsd: priced.costUsd } : {};
    const ended = { ...withOutcome(ctx, e, input), state: input.state, updatedAt: new Date() };
    const row = j.put({ ...ended, usage: priced?.usage ?? null, costUsd: priced?.costUsd ?? null }, [
      stepHistory(task, input.workerId, { ...e, state: input.state }, spent),
    ]);
    return answer(ctx, row, task.state);
  }
  throw new EngineError(
    'DIVERGENT_STEP',
    `Step ${e.sequence} is ${e.state}; it cannot become ${input.state}.`,
    { sequence: e.sequence, state: e.state },
  );
}

/** An approved call starts: a keyed write gets its key; a delegation starts its child. */
async function startApproved(
  j: JournalState,
  ctx: EngineContext,
  reads: RuleReads,
  e: StepRow,
  input: JournalStepInput,
): Promise<JournalResult> {
  const task = j.task;
  const binding = bindingOf(task.agentWork, e.toolRef);
  // SPEC §11 order at STARTED: the window, then the deciders' authority, then the precondition
  const standing = e.approvalId ? await reads.approval(e.approvalId) : null;
  const lapse = standing ? lapseOf(standing, binding, new Date()) : null;
  if (standing && lapse) e = afterLapse(j, e, input, binding, standing, lapse);
  const failed = checkPrecondition(j, ctx, e, binding, standing);
  if (failed !== null) voidForFacts(j, e, input, standing, failed);
  checkLimits(j, 'write');
  const key =
    binding?.idempotency === 'key'
      ? (e.idempotencyKey ?? idempotencyKeyFor(task.id, task.attempt, e.sequence))
      : null;
  const row = j.put({ ...e, state: 'STARTED', idempotencyKey: key, updatedAt: new Date() }, [
    stepHistory(task, input.workerId, { ...e, state: 'STARTED' }),
  ]);
  if (binding?.transport === 'delegate') return delegate(j, ctx, row, binding);
  return answer(ctx, row, task.state);
}

function delegate(j: JournalState, ctx: EngineContext, row: StepRow, binding: ToolBinding): JournalResult {
  const args = argumentsOf(ctx.sealer.openJson(row.requestEnc)) as Record<string, unknown>;
  j.park('AWAITING_CHILD');
  j.after((db) => startDelegation(db as Tx, ctx, j.task, row, binding, args).then(() => {}));
  return answer(ctx, row, 'AWAITING_CHILD');
}

async function create(
  j: JournalState,
  ctx: EngineContext,
  reads: RuleReads,
  input: JournalStepInput,
  digest: string,
  binding: ToolBinding | null,
): Promise<JournalResult> {
  const task = j.task;
  const now = new Date();
  const base: StepRow = {
    taskId: task.id,
    attempt: task.attempt,
    sequence: input.sequence,
    kind: input.kind,
    state: input.state,
    toolRef: input.toolRef ?? null,
    policy: binding?.policy ?? null,
    model: input.kind === 'MODEL_CALL' ? input.model! : null,
    digest,
    requestEnc: ctx.sealer.sealJson(input.request),
    responseEnc: null,
    errorEnc: null,
    keyId: ctx.sealer.currentKeyId,
    idempotencyKey: null,
    comment: null,
    reused: false,
    usage: null,
    costUsd: null,
    approvalId: null,
    purpose: input.purpose ?? 'CALL',
    reconciled: false,
    createdAt: now,
    updatedAt: now,
  };
  const put = (row: StepRow) => j.put(row, [stepHistory(task, input.workerId, row)]);
  if (input.kind === 'MODEL_CALL') {
    if (input.state !== 'STARTED')
      throw invalid(
        'Journal a model call STARTED before calling the model, then COMPLETED or FAILED.',
        'state',
      );
    checkLimits(j, 'model call');
    return answer(ctx, put(base), task.state);
  }
  const b = binding!;
  if (base.purpose !== 'CALL' && b.policy !== 'read')
    throw invalid(`A ${base.purpose} step reads a read tool; ${b.ref} is a ${b.policy} tool.`, 'purpose');
  if (b.policy === 'read') {
    if (input.state !== 'COMPLETED' && input.state !== 'FAILED' && input.state !== 'STARTED') {
      throw invalid('A read is journaled COMPLETED (or FAILED) after it ran.', 'state');
    }
    return answer(ctx, put(withOutcome(ctx, base, input)), task.state);
  }
  // only a later attempt can reuse (and only then is the database asked)
  const reusable = task.attempt > 1 ? await reads.reusable(task, input.sequence, digest) : null;
  if (reusable) return reuse(j, ctx, input, base, reusable);
  if (b.policy === 'approval_required') {
    // refused before a person is asked: once approved, its STARTED would be refused all the same
    checkLimits(j, 'write');
    const step = propose(j, ctx, input, base, b, task.agentWork!);
    return answer(ctx, step, task.state);
  }
  if (input.state !== 'STARTED') {
    throw invalid(
      `${b.ref} is a write: journal it STARTED before sending it, then COMPLETED or FAILED.`,
      'state',
    );
  }
  const refused = refuseByRules(j, input, base, b, argumentsOf(input.request) as Record<string, unknown>);
  if (refused) return answer(ctx, refused, task.state);
  checkLimits(j, 'write');
  const key = b.idempotency === 'key' ? idempotencyKeyFor(task.id, task.attempt, input.sequence) : null;
  const row = put({ ...base, state: 'STARTED', idempotencyKey: key });
  if (b.transport === 'delegate') return delegate(j, ctx, row, b);
  return answer(ctx, row, task.state);
}

/** An earlier attempt already made (or was allowed to make) this exact call: answer from the journal. */
function reuse(
  j: JournalState,
  ctx: EngineContext,
  input: JournalStepInput,
  base: StepRow,
  reusable: Reusable,
): JournalResult {
  const row: StepRow = {
    ...base,
    state: reusable.state,
    responseEnc: reusable.responseEnc,
    idempotencyKey: reusable.idempotencyKey,
    reused: reusable.state !== 'STARTED',
    approvalId: reusable.approvalId,
    comment: reusable.comment,
  };
  j.put(row, [
    stepHistory(j.task, input.workerId, row, {
      from: { attempt: reusable.attempt, sequence: reusable.sequence },
    }),
  ]);
  return answer(ctx, row, j.task.state);
}

function withOutcome(ctx: EngineContext, base: StepRow, input: JournalStepInput): StepRow {
  return {
    ...base,
    responseEnc: input.response === undefined ? null : ctx.sealer.sealJson(input.response),
    errorEnc: input.error ? ctx.sealer.sealJson(input.error) : null,
  };
}
