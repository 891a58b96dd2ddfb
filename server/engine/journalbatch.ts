/**
 * Batched journaling: several steps of one task's attempt in one request and one transaction, each under
 * exactly journalStep's rules (see journal.ts), all or nothing.
 */
import { EngineError } from '../errors.js';
import type { Actor, EngineContext } from './context.js';
import { type JournalResult, type JournalStepInput, journalStepTx, precheck } from './journal.js';
import { SlowPath, StepBuffer } from './stepbuffer.js';
import { directStore, type StepStore } from './stepstore.js';
import { invalid } from './stepinput.js';

const MAX_BATCH_STEPS = 50;

/** Batches journaled per path, since the process started (rendered on /metrics). */
export const batchPaths = { buffered: 0, stepwise: 0 };

/**
 * Several steps of one task's attempt in one request and one transaction, applied in order with exactly
 * the rules of journalStep; all or nothing (the error names the step's index). A worker sends what it
 * already knows at once — e.g. a read's COMPLETED and the next model call's STARTED — and pays one
 * request and one commit instead of one per step. A step that parks the task (PROPOSED, a delegation)
 * must be the last of its batch: the lease is gone after it.
 *
 * The common batch (model calls, reads, writes) is read once and written in one statement
 * (stepbuffer.ts); a batch with a step that needs more of the database runs step by step.
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
  const [first] = inputs;
  const sameAttempt = inputs.every((i) => i.taskId === first.taskId && i.attempt === first.attempt);
  if (sameAttempt) {
    try {
      return await ctx.db
        .transaction(async (tx) => {
          const buffer = await StepBuffer.load(tx, actor, {
            taskId: first.taskId,
            attempt: first.attempt,
            sequences: inputs.map((i) => i.sequence),
            withUsage: inputs.some((i) => i.kind === 'MODEL_CALL' && i.state === 'STARTED'),
          });
          const out = await applyAll(buffer, ctx, actor, inputs);
          await buffer.flush();
          return out;
        })
        .then((out) => {
          batchPaths.buffered++;
          return out;
        });
    } catch (e) {
      if (!(e instanceof SlowPath)) throw e;
    }
  }
  const out = await ctx.db.transaction((tx) => applyAll(directStore(tx), ctx, actor, inputs));
  batchPaths.stepwise++;
  return out;
}

async function applyAll(
  store: StepStore,
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
): Promise<JournalResult[]> {
  const out: JournalResult[] = [];
  for (const [index, input] of inputs.entries()) {
    try {
      out.push(await journalStepTx(store, ctx, actor, input));
    } catch (e) {
      throw withIndex(e, index);
    }
  }
  return out;
}

function withIndex(e: unknown, index: number): unknown {
  if (!(e instanceof EngineError)) return e;
  return new EngineError(
    e.code,
    `Step ${index} of the batch: ${e.message} Nothing of the batch was journaled.`,
    { ...e.details, index },
  );
}
