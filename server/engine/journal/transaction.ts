/**
 * One journal call in a transaction of its own (runOne): the load, the rules in memory and the write of
 * state.ts, two round trips (`BEGIN; load` and `write; COMMIT`). group.ts uses the same pieces.
 */
import type pg from 'pg';
import { bindDb, connectionOf, type Db } from '../../db/pg.js';
import { EngineError, notFound } from '../../errors.js';
import { approvalStanding } from '../approvals/index.js';
import { type Actor, type EngineContext, isUuid, sameProject } from '../common/index.js';
import type { JournalStepInput } from './input.js';
import { priceUsage, priceUsageCached } from '../prices/index.js';
import { findReusable } from './reuse.js';
import { RefusalAfterCommit } from './reopen.js';
import { applyStep, type JournalResult, type RuleReads } from './rules.js';
import { beginAndLoad, type LoadKey, write, writeAndCommit } from './sql.js';
import { JournalState } from './state.js';

/** What a call's load needs: a guard read needs the call before it; a proposal, the read before it. */
export function loadKeyOf(inputs: JournalStepInput[]): LoadKey {
  const [{ taskId, attempt }] = inputs;
  const sequences = inputs.flatMap((i) =>
    (i.purpose && i.purpose !== 'CALL') || i.state === 'PROPOSED'
      ? [i.sequence - 1, i.sequence]
      : [i.sequence],
  );
  // what starts (or is proposed) may be held to the node's limits; a read STARTED loads it needlessly
  const withUsage = inputs.some((i) => i.state === 'STARTED' || i.state === 'PROPOSED');
  return { taskId, attempt, sequences, withUsage };
}

/**
 * A journal transaction on a connection of its own. `body` begins it (BEGIN travels with the load) and
 * calls `committed()` once it has committed; on a throw, a transaction still open is rolled back, and a
 * connection whose ROLLBACK failed is discarded instead of going back to the pool.
 */
export async function ownTransaction<T>(
  ctx: EngineContext,
  body: (db: Db, committed: () => void) => Promise<T>,
): Promise<T> {
  const client = await (connectionOf(ctx.db) as pg.Pool).connect();
  let open = true;
  let broken: Error | undefined;
  try {
    return await body(bindDb(client), () => {
      open = false;
    });
  } catch (e) {
    if (open) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
    throw e;
  } finally {
    client.release(broken);
  }
}

export async function runOne(ctx: EngineContext, actor: Actor, inputs: JournalStepInput[], batch: boolean) {
  const [{ taskId }] = inputs;
  if (!isUuid(taskId)) throw notFound('external task', taskId);
  return ownTransaction(ctx, async (db, committed) => {
    const row = await beginAndLoad(db, loadKeyOf(inputs));
    if (!row || !sameProject(actor, row.projectId as string)) throw notFound('external task', taskId);
    const state = JournalState.fromLoad(row);
    const { out, refusal } = await applyAll(state, ctx, actor, readsOf(db, state), inputs, batch);
    await writeAndCommit(db, state.takeChanges(), state.effects);
    committed();
    if (refusal) throw refusal;
    return out;
  });
}

/** The rules' reads in the call's transaction; `onWrite` hears when one writes the call's changes first. */
export function readsOf(db: Db, state: JournalState, onWrite?: () => void): RuleReads {
  return {
    async reusable(task, sequence, digest) {
      // the read must see this call's earlier steps: write them first (same transaction)
      onWrite?.();
      await write(db, state.takeChanges(), false);
      return findReusable(db, task, sequence, digest);
    },
    price: async (model, usage) => priceUsageCached(model, usage) ?? priceUsage(db, model, usage),
    approval: (approvalId) => approvalStanding(db, approvalId),
  };
}

/** Applies the steps in order; a refusal that commits its change ends the call after the write. */
export async function applyAll(
  state: JournalState,
  ctx: EngineContext,
  actor: Actor,
  reads: RuleReads,
  inputs: JournalStepInput[],
  batch: boolean,
): Promise<{ out: JournalResult[]; refusal?: unknown }> {
  const out: JournalResult[] = [];
  for (const [index, input] of inputs.entries()) {
    try {
      out.push(await applyStep(state, ctx, actor, reads, input));
    } catch (e) {
      if (!(e instanceof RefusalAfterCommit)) throw batch ? withIndex(e, index) : e;
      return { out, refusal: batch ? withIndex(e.refusal, index) : e.refusal };
    }
  }
  return { out };
}

export function withIndex(e: unknown, index: number): unknown {
  if (!(e instanceof EngineError)) return e;
  return new EngineError(
    e.code,
    `Step ${index} of the batch: ${e.message} ${e.details.committed ? 'The steps before it were journaled.' : 'Nothing of the batch was journaled.'}`,
    { ...e.details, index },
  );
}
