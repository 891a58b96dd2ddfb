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
 */
import { type Actor, type EngineContext, isUuid, sameProject, type Tx } from '../common/index.js';
import { checkBatch } from './commands.js';
import { applyAll, loadKeyOf, onConnection, ownTransaction, readsOf } from './exec.js';
import type { JournalStepInput } from './input.js';
import { beginAndLoad, write } from './sql.js';
import { JournalState } from './state.js';

/** Anything this transaction will not answer: the separate path will. */
class SeparatePath extends Error {}

export async function journalThen<T>(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  then: (tx: Tx) => Promise<T>,
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
      await write(client, state.takeChanges(), false);
      const value = await then(db);
      await client.query('COMMIT');
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
