/**
 * Steps and the command they end, in one transaction: `journalThen` journals a task attempt's steps
 * exactly as journalSteps does (same load, rules and write, exec.ts) and then runs the caller's own work
 * on the same connection before the one COMMIT. completeTask uses it for the last step ends that travel
 * with a completion: one BEGIN, one COMMIT and one connection instead of two of each.
 *
 * It never answers with a refusal of its own. When a step is refused, a step has an effect (a proposal,
 * a delegation: the lease ends there, so nothing may follow in its transaction) or the caller's work
 * throws, everything is rolled back and it returns `undefined`; the caller then takes the separate path
 * (journalSteps, then its own transaction), which answers exactly as before — the steps committed
 * first, the refusal in its usual form.
 *
 * The caller's work gets the task the journal locked and loaded (its row as lockTask reads it), and can
 * spare two round trips: `after`, a statement run with the journal's write (its first row comes with
 * the task: reads that must see the steps just written), and `last`, a statement its work returns to run
 * with the COMMIT. Both are EXECUTEs of statements registered with prepareWithJournal (sql.ts).
 */
import { type Actor, type EngineContext, isUuid, sameProject, type Tx } from '../common/index.js';
import { checkBatch } from './commands.js';
import { applyAll, loadKeyOf, onConnection, ownTransaction, readsOf } from './exec.js';
import type { JournalStepInput } from './input.js';
import type { LockedTaskRow } from '../lease/index.js';
import { beginAndLoad, write } from './sql.js';
import { JournalState } from './state.js';

/** Anything this transaction will not answer: the separate path will. */
class SeparatePath extends Error {}

/** What the caller's work of journalThen gets: the locked task, and the first row of `after`. */
export interface JournalLocked {
  task: LockedTaskRow;
  after: Record<string, unknown> | undefined;
}

export async function journalThen<T>(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  then: (tx: Tx, locked: JournalLocked) => Promise<{ value: T; last?: string }>,
  after?: string,
): Promise<{ value: T } | undefined> {
  try {
    checkBatch(ctx, actor, inputs);
    const [{ taskId, attempt }] = inputs;
    // the load inlines the id: it must be a UUID (the separate path answers NOT_FOUND)
    if (!isUuid(taskId)) return undefined;
    return await ownTransaction(ctx, async (client, committed) => {
      const { sequences, withUsage } = loadKeyOf(inputs);
      const row = await beginAndLoad(client, taskId, attempt, sequences, withUsage);
      if (!row || !sameProject(actor, row.projectId as string)) throw new SeparatePath();
      const state = JournalState.fromLoad(row);
      // drizzle on the call's connection, whose transaction is the one begun above (exec.ts)
      const db = onConnection(client)() as Tx;
      const reads = readsOf(client, state, () => db);
      const { refusal } = await applyAll(state, ctx, actor, reads, inputs, true);
      if (refusal || state.effects.length > 0) throw new SeparatePath();
      const rows = await write(client, state.takeChanges(), false, after);
      const { value, last } = await then(db, { task: state.task, after: rows?.[0] });
      await client.query(last ? `${last}; COMMIT` : 'COMMIT');
      committed();
      ctx.counters.journalCalls.batch++;
      return { value };
    });
  } catch {
    // a refusal, an effect, the caller's own refusal, a database error: the separate path answers it
    // (ownTransaction rolled back whatever was open)
    return undefined;
  }
}
