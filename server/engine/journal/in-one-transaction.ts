/**
 * Steps and the command they end, in one transaction: `journalThen` journals a task attempt's steps
 * exactly as journalSteps does (transaction.ts), then runs the caller's work on the same connection
 * before the one COMMIT (completeTask's last steps: one BEGIN, COMMIT and connection instead of two).
 *
 * It never refuses on its own: when a step is refused, has an effect (a proposal, a delegation: the lease
 * ends there) or the work throws, all is rolled back and it returns `undefined`; the caller then takes the
 * separate path (journalSteps, then its own transaction), answering as if the steps had come alone.
 *
 * The work gets the task as lockTask reads it; two round trips spared: `after` runs a statement with the
 * journal's write (its first row comes with the task), `last` one the work returns with the COMMIT.
 */
import { connectionOf, execute, pipelined } from '../../db/pg.js';
import {
  type Actor,
  countFallback,
  type EngineContext,
  isUuid,
  sameProject,
  type Tx,
} from '../common/index.js';
import { fallbackReason } from '../../errors.js';
import { checkBatch } from './commands.js';
import { applyAll, loadKeyOf, ownTransaction, readsOf } from './transaction.js';
import type { JournalStepInput } from './input.js';
import type { LockedTaskRow } from '../lease/index.js';
import { beginAndLoad, type Then, write } from './sql.js';
import { JournalState } from './state.js';

/** What this transaction will not answer, and why (the metric's reason): the separate path will. */
class SeparatePath extends Error {
  override name = 'SeparatePath';
}

export async function journalThen<T>(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  then: (
    tx: Tx,
    locked: { task: LockedTaskRow; after: Record<string, unknown> | undefined },
  ) => Promise<{ value: T; last?: Then }>,
  after?: Then,
): Promise<{ value: T } | undefined> {
  try {
    checkBatch(ctx, actor, inputs);
    const [{ taskId }] = inputs;
    if (!isUuid(taskId)) throw new SeparatePath('not-found');
    return await ownTransaction(ctx, async (db, committed) => {
      const row = await beginAndLoad(db, loadKeyOf(inputs));
      if (!row || !sameProject(actor, row.projectId as string)) throw new SeparatePath('not-found');
      const state = JournalState.fromLoad(row);
      const { refusal } = await applyAll(state, ctx, actor, readsOf(db, state), inputs, true);
      if (refusal) throw new SeparatePath('refused');
      if (state.effects.length > 0) throw new SeparatePath('effect');
      const rows = await write(db, state.takeChanges(), false, after);
      const { value, last } = await then(db, { task: state.task, after: rows?.[0] });
      // in this order: the last statement, then COMMIT (a pipelined connection sends them as issued)
      const tail = last ? execute(db, last.statement, last.values) : Promise.resolve([]);
      await pipelined(tail, connectionOf(db).query('COMMIT'));
      committed();
      ctx.counters.journalCalls.batch++;
      return { value };
    });
  } catch (e) {
    // ownTransaction rolled back; what is not a named reason is a bug, not hidden behind the slow path
    const reason = e instanceof SeparatePath ? e.message : fallbackReason(e);
    if (reason === null) throw e;
    countFallback(ctx.counters, 'journal-then', reason);
    return undefined;
  }
}
