/**
 * Refusals that change state before they answer (SPEC §11), at the start of an approved call. Part of
 * the rules of a step (rules.ts), kept apart because these answer with an error after committing.
 */
import { randomUUID } from 'node:crypto';
import type { StepRow } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import {
  approvalOpened,
  autoHistory,
  isAutoApproval,
  type Lapse,
  lapseHistory,
  reapproveByRule,
  reopenApproval,
  ruleAt,
  type Standing,
  voidApproval,
} from '../approvals/index.js';
import { factsChangedReason } from '../../shared/guard.js';
import type { ToolBinding } from '../definitions/index.js';
import type { JournalStepInput } from './input.js';
import { type JournalState, stepHistory } from './state.js';

/**
 * Thrown by a rule after it changed the state: the call commits its changes so far (a batch's earlier
 * steps stand), then answers with `refusal`, which says so; a batch's later steps are not applied.
 */
export class RefusalAfterCommit extends Error {
  readonly refusal: EngineError;
  constructor(e: EngineError) {
    super(e.message);
    this.refusal = new EngineError(e.code, e.message, { ...e.details, committed: true });
  }
}

/**
 * The approval of a call about to start no longer stands (expired, or its deciders' authority lapsed).
 * An `auto` rule's approval whose window lapsed: the rule approves a new version at once (SPEC §14.1:
 * EXPIRED, APPROVAL_AUTO again) and the start goes on. Else (a person's approval, or the rule is gone)
 * the step goes back to PROPOSED under a new approval version for people to decide; the task parks.
 */
export function afterLapse(
  j: JournalState,
  e: StepRow,
  input: JournalStepInput,
  binding: ToolBinding | undefined,
  standing: Standing,
  lapse: Lapse,
): StepRow {
  const task = j.task;
  const old = standing.approval;
  const newId = randomUUID();
  const rule = isAutoApproval(old) && lapse.state === 'EXPIRED' ? ruleAt(binding, old.ruleIndex) : null;
  if (rule?.auto) {
    const step: StepRow = { ...e, approvalId: newId, updatedAt: new Date() };
    j.put(step, [
      lapseHistory(old, lapse),
      ...autoHistory(task, step, rule, old.proposalVersion + 1, old.definitionVersion, newId),
    ]);
    j.after((db) => reapproveByRule(db, { task, old, newId, lapse, sequence: e.sequence }));
    return step;
  }
  const step: StepRow = { ...e, state: 'PROPOSED', approvalId: newId, updatedAt: new Date() };
  j.put(step, [
    lapseHistory(old, lapse),
    approvalOpened(task, step, binding!, old.levels, newId),
    stepHistory(task, input.workerId, step, { approvalId: newId, version: old.proposalVersion + 1 }),
  ]);
  j.park('AWAITING_APPROVAL');
  j.after((db) => reopenApproval(db, { task, old, newId, lapse, binding, sequence: e.sequence }));
  throw new RefusalAfterCommit(new EngineError(lapse.code, lapse.message, lapse.details));
}

/**
 * The precondition no longer holds when the approved call starts: the approval is VOIDED, the step
 * REJECTED with the engine's message (the model reads which fact changed and re-plans under this lease).
 */
export function voidForFacts(
  j: JournalState,
  e: StepRow,
  input: JournalStepInput,
  standing: Standing | null,
  explanation: string,
): never {
  const task = j.task;
  const reason = factsChangedReason(explanation);
  const step: StepRow = { ...e, state: 'REJECTED', comment: reason, updatedAt: new Date() };
  const a = standing?.approval;
  const voided: Lapse = {
    state: 'VOIDED',
    voidReason: 'PRECONDITION',
    code: 'PRECONDITION_FAILED',
    message: reason,
    details: { failed: explanation },
  };
  const lapsed = a ? [lapseHistory(a, voided)] : [];
  j.put(step, [...lapsed, stepHistory(task, input.workerId, step, { voidReason: 'PRECONDITION' })]);
  if (a) j.after((db) => voidApproval(db, a, reason));
  throw new RefusalAfterCommit(
    new EngineError('PRECONDITION_FAILED', `Step ${e.sequence} was not executed: ${reason}`, {
      sequence: e.sequence,
      failed: explanation,
    }),
  );
}
