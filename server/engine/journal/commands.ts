/**
 * The journal's entry points: `journalStep` (one step) and `journalSteps` (several steps of one task's
 * attempt in one request and one transaction, each under exactly journalStep's rules — see journal.ts —
 * all or nothing). Both first try the buffered path (stepbuffer.ts: one read and one write in two round
 * trips) and fall back to the step-by-step path when a step needs more of the database.
 */
import { EngineError } from '../../errors.js';
import type { Actor, EngineContext } from '../common/index.js';
import { type JournalResult, type JournalStepInput, journalStepTx, precheck } from './rules.js';
import { SlowPath, StepBuffer } from './buffer.js';
import { invalid } from './input.js';
import { directStore, type StepStore } from './store.js';

const MAX_BATCH_STEPS = 50;

/** Batches and single steps committed per path since the process started (rendered on /metrics). */
export const batchPaths = { buffered: 0, stepwise: 0 };
export const stepPaths = { buffered: 0, stepwise: 0 };

/** One step (SPEC §4): locks only the external-task row and never advances the process. */
export async function journalStep(
  ctx: EngineContext,
  actor: Actor,
  input: JournalStepInput,
): Promise<JournalResult> {
  precheck(ctx, actor, input);
  return (await run(ctx, actor, [input], false))[0];
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
  return run(ctx, actor, inputs, true);
}

async function run(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  batch: boolean,
): Promise<JournalResult[]> {
  const [first] = inputs;
  const paths = batch ? batchPaths : stepPaths;
  // A proposal always opens an approval (the database), so a call with one goes step by step at once
  // instead of loading, meeting SlowPath and loading again.
  const buffered =
    inputs.every((i) => i.taskId === first.taskId && i.attempt === first.attempt) &&
    !inputs.some((i) => i.state === 'PROPOSED');
  if (buffered) {
    const key = {
      taskId: first.taskId,
      attempt: first.attempt,
      sequences: inputs.map((i) => i.sequence),
      withUsage: inputs.some((i) => i.kind === 'MODEL_CALL' && i.state === 'STARTED'),
    };
    try {
      const out = await StepBuffer.run(ctx, actor, key, (buffer) =>
        applyAll(buffer, ctx, actor, inputs, batch),
      );
      paths.buffered++;
      return out;
    } catch (e) {
      if (!(e instanceof SlowPath)) throw e;
    }
  }
  const out = await ctx.db.transaction((tx) => applyAll(directStore(tx), ctx, actor, inputs, batch));
  paths.stepwise++;
  return out;
}

async function applyAll(
  store: StepStore,
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  batch: boolean,
): Promise<JournalResult[]> {
  const out: JournalResult[] = [];
  for (const [index, input] of inputs.entries()) {
    try {
      out.push(await journalStepTx(store, ctx, actor, input));
    } catch (e) {
      throw batch ? withIndex(e, index) : e;
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
