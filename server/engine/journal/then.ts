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
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import { type Actor, type EngineContext, isUuid, pgClientOf, sameProject, type Tx } from '../common/index.js';
import { applyAll, loadKeyOf, readsOf } from './exec.js';
import { type JournalStepInput, precheck } from './input.js';
import { beginAndLoad, write } from './sql.js';
import { JournalState } from './state.js';

export async function journalThen<T>(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  then: (tx: Tx) => Promise<T>,
): Promise<{ value: T } | undefined> {
  const [{ taskId, attempt }] = inputs;
  try {
    if (!isUuid(taskId)) return undefined;
    for (const input of inputs) {
      precheck(ctx, actor, input);
      if (input.taskId !== taskId || input.attempt !== attempt) return undefined;
    }
  } catch {
    return undefined;
  }
  const client = await (pgClientOf(ctx.db) as pg.Pool).connect();
  let open = true; // from the BEGIN on (it travels with the load)
  let broken: Error | undefined;
  try {
    const { sequences, withUsage } = loadKeyOf(inputs);
    const row = await beginAndLoad(client, taskId, attempt, sequences, withUsage);
    if (!row || !sameProject(actor, row.projectId as string)) return await rollback();
    const state = JournalState.fromLoad(row);
    // the call's own drizzle: its transaction is the one begun above (never drizzle's transaction());
    // without the schema, which costs ~0.1 ms to map on every call and serves only relational queries
    const db = drizzle(client) as unknown as Tx;
    const { refusal } = await applyAll(
      state,
      ctx,
      actor,
      readsOf(client, state, () => db),
      inputs,
      true,
    );
    if (refusal || state.effects.length > 0) return await rollback();
    await write(client, state.takeChanges(), false);
    const value = await then(db);
    await client.query('COMMIT');
    open = false;
    ctx.counters.journalCalls.batch++;
    return { value };
  } catch {
    // whatever failed (a database error too) answers on the separate path, which says it properly
    return await rollback();
  } finally {
    client.release(broken);
  }

  async function rollback(): Promise<undefined> {
    if (open) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
    open = false;
    return undefined;
  }
}
