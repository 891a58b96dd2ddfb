/**
 * The journal's commands. Each runs the same path (transaction.ts), alone or, when calls of other tasks
 * arrive at the same time, in one transaction with them (group.ts).
 */
import { EngineError, invalid } from '../../errors.js';
import type { Actor, EngineContext } from '../common/index.js';
import { withIndex } from './transaction.js';
import { journalGroups, MAX_BATCH_TASKS } from './group.js';
import { type JournalStepInput, precheck } from './input.js';
import type { JournalResult } from './rules.js';

const MAX_BATCH_STEPS = 50;

/** One step (SPEC §4): locks only the external-task row and never advances the process. */
export async function journalStep(ctx: EngineContext, actor: Actor, input: JournalStepInput) {
  precheck(ctx, actor, input);
  const [answer] = journalGroups(ctx).submit(actor, [{ inputs: [input], batch: false }]);
  const [out] = await counted(ctx, false, answer);
  return out;
}

/**
 * Several steps of one task's attempt (e.g. a model call's COMPLETED and the next write's STARTED) in one
 * transaction, in order with journalStep's rules; all or nothing (the error names the step's index). A
 * step that parks the task (PROPOSED, a delegation) must be last: the lease is gone after it.
 */
export async function journalSteps(ctx: EngineContext, actor: Actor, inputs: JournalStepInput[]) {
  checkBatch(ctx, actor, inputs);
  return counted(ctx, true, journalGroups(ctx).submit(actor, [{ inputs, batch: true }])[0]);
}

/** A call's answer, counted once journaled. */
function counted(ctx: EngineContext, batch: boolean, answer: Promise<JournalResult[]>) {
  return answer.then((out) => {
    ctx.counters.journalCalls[batch ? 'batch' : 'single']++;
    return out;
  });
}

/**
 * Several tasks' journal calls in one request, each entry answered exactly as its own call alone would be
 * (journalStep's or journalSteps'); all go to the group commit at once, so they normally share one
 * transaction. One promise per entry, in order: an entry's refusal never fails another. Only the batch's
 * shape (1 to MAX_BATCH_TASKS entries, one per task) is refused as a whole.
 */
export function journalBatch(
  ctx: EngineContext,
  actor: Actor,
  entries: { taskId: string; steps: JournalStepInput[] }[],
): Promise<JournalResult[]>[] {
  if (entries.length === 0 || entries.length > MAX_BATCH_TASKS) {
    throw invalid(`A journal batch holds 1 to ${MAX_BATCH_TASKS} tasks.`, 'entries');
  }
  const i = entries.findIndex((e, at) => entries.findIndex((x) => x.taskId === e.taskId) !== at);
  if (i >= 0) {
    throw invalid(
      `Entry ${i} repeats task ${entries[i].taskId}: a journal batch holds one entry per task (put all of a task's steps in its entry).`,
      `entries.${i}.taskId`,
    );
  }
  ctx.counters.journalBatches.requests++;
  ctx.counters.journalBatches.entries += entries.length;
  const refused = entries.map((e) => {
    try {
      // an entry of one step is journalStep's call (its refusal names no index), of several journalSteps'
      if (e.steps.length === 1) precheck(ctx, actor, e.steps[0]);
      else checkBatch(ctx, actor, e.steps);
      return null;
    } catch (err) {
      // an entry's own refusal is its answer; anything else is a bug and fails the batch
      if (err instanceof EngineError) return err;
      throw err;
    }
  });
  const sent = journalGroups(ctx).submit(
    actor,
    entries
      .filter((_, i) => refused[i] === null)
      .map((e) => ({ inputs: e.steps, batch: e.steps.length > 1 })),
  );
  let next = 0;
  return entries.map((e, i) => {
    const answer =
      refused[i] !== null ? Promise.reject(refused[i]) : counted(ctx, e.steps.length > 1, sent[next++]);
    // the caller reads each answer when it gets to that entry: a refusal is not unhandled meanwhile
    answer.catch(() => {});
    return answer;
  });
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
