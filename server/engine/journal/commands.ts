/**
 * The journal's commands: `journalStep` (one step) and `journalSteps` (several steps of one task's
 * attempt in one request and one transaction, all or nothing). Both run the same path (exec.ts), alone
 * or, when calls of other tasks arrive at the same time, in one transaction with them (group.ts).
 */
import { invalid } from '../../errors.js';
import type { Actor, EngineContext } from '../common/index.js';
import { withIndex } from './exec.js';
import { journalGroups } from './group.js';
import { type JournalStepInput, precheck } from './input.js';
import type { JournalResult } from './rules.js';

const MAX_BATCH_STEPS = 50;

/** One step (SPEC §4): locks only the external-task row and never advances the process. */
export async function journalStep(
  ctx: EngineContext,
  actor: Actor,
  input: JournalStepInput,
): Promise<JournalResult> {
  precheck(ctx, actor, input);
  const [out] = await journalGroups(ctx).submit(actor, [input], false);
  ctx.counters.journalCalls.single++;
  return out;
}

/**
 * Several steps of one task's attempt in one request and one transaction, applied in order with exactly
 * the rules of journalStep; all or nothing (the error names the step's index). A worker sends what it
 * already knows at once — e.g. a model call's COMPLETED and the next write's STARTED — and pays one
 * request and one commit instead of one per step. A step that parks the task (PROPOSED, a delegation)
 * must be the last of its batch: the lease is gone after it.
 */
export async function journalSteps(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
): Promise<JournalResult[]> {
  checkBatch(ctx, actor, inputs);
  const out = await journalGroups(ctx).submit(actor, inputs, true);
  ctx.counters.journalCalls.batch++;
  return out;
}

/** What a batch must be before it is loaded: 1 to 50 steps of one task attempt, each checked alone. */
export function checkBatch(ctx: EngineContext, actor: Actor, inputs: JournalStepInput[]): void {
  if (inputs.length === 0 || inputs.length > MAX_BATCH_STEPS) {
    throw invalid(`A batch holds 1 to ${MAX_BATCH_STEPS} steps.`, 'steps');
  }
  inputs.forEach((input, index) => {
    try {
      precheck(ctx, actor, input);
      if (input.taskId !== inputs[0].taskId || input.attempt !== inputs[0].attempt)
        throw invalid('A batch holds steps of one task attempt.', 'steps');
    } catch (e) {
      throw withIndex(e, index);
    }
  });
}
