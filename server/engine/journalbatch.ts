/**
 * Batched journaling: several steps of one task's attempt in one request and one transaction, each under
 * exactly journalStep's rules (see journal.ts), all or nothing.
 */
import { EngineError } from '../errors.js';
import type { Actor, EngineContext } from './context.js';
import { type JournalResult, type JournalStepInput, journalStepTx, precheck } from './journal.js';
import { invalid } from './stepinput.js';

const MAX_BATCH_STEPS = 50;

/**
 * Several steps of one task's attempt in one request and one transaction, applied in order with exactly
 * the rules of journalStep; all or nothing (the error names the step's index). A worker sends what it
 * already knows at once — e.g. a read's COMPLETED and the next model call's STARTED — and pays one
 * request and one commit instead of one per step. A step that parks the task (PROPOSED, a delegation)
 * must be the last of its batch: the lease is gone after it.
 */
export async function journalSteps(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
): Promise<JournalResult[]> {
  if (inputs.length === 0 || inputs.length > MAX_BATCH_STEPS) {
    throw invalid(`A batch holds 1 to ${MAX_BATCH_STEPS} steps.`, 'steps');
  }
  inputs.forEach((input, index) => {
    try {
      precheck(ctx, actor, input);
    } catch (e) {
      throw withIndex(e, index);
    }
  });
  return ctx.db.transaction(async (tx) => {
    const out: JournalResult[] = [];
    for (const [index, input] of inputs.entries()) {
      try {
        out.push(await journalStepTx(tx, ctx, actor, input));
      } catch (e) {
        throw withIndex(e, index);
      }
    }
    return out;
  });
}

function withIndex(e: unknown, index: number): unknown {
  if (!(e instanceof EngineError)) return e;
  return new EngineError(
    e.code,
    `Step ${index} of the batch: ${e.message} Nothing of the batch was journaled.`,
    { ...e.details, index },
  );
}
