/**
 * A call the rules judge before it goes out (SPEC §14): a write at STARTED, an approval_required call
 * at PROPOSED. A refusal is a REJECTED step the model reads — never an error the worker must handle —
 * and a re-send of it is answered from the journal. Part of the rules of a step (rules.ts).
 */
import { randomUUID } from 'node:crypto';
import type { StepRow } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { checkGuard } from '../../shared/guard.js';
import { deniedComment, invalidComment, notProposedComment } from '../../shared/refusals.js';
import {
  approvalOpened,
  argumentFailures,
  failureRecord,
  levelsOf,
  openApproval,
  ruleFor,
  ruleRecord,
} from '../approvals/index.js';
import type { EngineContext } from '../common/index.js';
import type { AgentWork, ToolBinding } from '../definitions/index.js';
import { attemptHistory } from '../lease/index.js';
import { factsFor, guardOf } from './guards.js';
import { argumentsOf, type JournalStepInput } from './input.js';
import { type JournalState, stepHistory } from './state.js';

/** A step refused before it went out: its REJECTED row, and the engine's history row that says why. */
function refuse(
  j: JournalState,
  input: JournalStepInput,
  base: StepRow,
  comment: string,
  eventType: string,
  data: Record<string, unknown>,
): StepRow {
  const t = j.task;
  const why = {
    ...attemptHistory(t, 'engine'),
    sequence: input.sequence,
    eventType,
    data: { toolRef: base.toolRef, digest: base.digest, ...data },
  };
  const step: StepRow = { ...base, state: 'REJECTED', comment };
  return j.put(step, [why, stepHistory(t, input.workerId, step)]);
}

/**
 * The checks every write and approval_required call passes first: its arguments (schema, validate),
 * then the deny rules. Returns the REJECTED step when one refuses, else null.
 */
export function refuseByRules(
  j: JournalState,
  input: JournalStepInput,
  base: StepRow,
  binding: ToolBinding,
  args: Record<string, unknown>,
): StepRow | null {
  const failures = argumentFailures(binding, args);
  if (failures.length > 0) {
    const comment = invalidComment(failures.map((f) => f.message));
    return refuse(j, input, base, comment, 'ARGUMENTS_INVALID', { failures: failures.map(failureRecord) });
  }
  const outcome = ruleFor(binding, args);
  if (outcome.kind !== 'deny') return null;
  const rule = ruleRecord(outcome.rule);
  return refuse(j, input, base, deniedComment(outcome.rule.deny!), 'POLICY_DENIED', { rule });
}

/**
 * A call that may need a person, PROPOSED: REJECTED when the rules refuse it or its precondition read
 * already fails (`Not proposed:`), APPROVED at once by an `auto` rule (the worker keeps its lease), else
 * parked with an approval (APPROVAL_OPENED just before STEP_PROPOSED; the approval row after the step).
 */
export function propose(
  j: JournalState,
  ctx: EngineContext,
  input: JournalStepInput,
  base: StepRow,
  binding: ToolBinding,
  work: AgentWork,
): StepRow {
  if (input.state !== 'PROPOSED') {
    throw new EngineError(
      'APPROVAL_REQUIRED',
      `${binding.ref} needs a person's approval: journal it PROPOSED and let the task go.`,
    );
  }
  const task = j.task;
  const args = argumentsOf(input.request) as Record<string, unknown>;
  const refused = refuseByRules(j, input, base, binding, args);
  if (refused) return refused;
  const factsEnc = factsFor(j, binding, base.sequence, args);
  const guard = guardOf(binding, 'PRECONDITION');
  if (guard && factsEnc) {
    const facts = checkGuard(guard.expression, ctx.sealer.openJson(factsEnc), args);
    if (!facts.holds) {
      const comment = notProposedComment(facts.explanation);
      return refuse(j, input, base, comment, 'NOT_PROPOSED', { failed: guard.expression });
    }
  }
  const outcome = ruleFor(binding, args);
  if (outcome.kind === 'deny') throw new Error('a deny rule matched after refuseByRules passed');
  const approvalId = randomUUID();
  const auto = outcome.kind === 'auto';
  const step: StepRow = { ...base, state: auto ? 'APPROVED' : 'PROPOSED', approvalId };
  const proposed = stepHistory(task, input.workerId, { ...step, state: 'PROPOSED' }, { approvalId });
  const opened = auto ? [] : [approvalOpened(task, step, binding, levelsOf(outcome, binding), approvalId)];
  j.put(step, [...opened, proposed]);
  if (!auto) j.park('AWAITING_APPROVAL');
  const evidence = { factsEnc, toolDescription: input.toolDescription?.slice(0, 4000) ?? null };
  j.after((db) =>
    openApproval(db, ctx, { task, step, binding, args, work, outcome, approvalId, ...evidence }),
  );
  return step;
}
