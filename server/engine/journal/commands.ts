/**
 * The journal's commands: `journalStep` (one step) and `journalSteps` (several steps of one task's
 * attempt in one request and one transaction, all or nothing). Both run the same path: one statement
 * locks the task and loads every step the call touches (sql.ts), the rules apply each step to that
 * state in memory (rules.ts), and one statement writes every changed step and its history rows — two
 * round trips in all (`BEGIN; load` and `write; COMMIT`). The few steps that need more of the database
 * read it in the same transaction: reuse from an earlier attempt (after writing what the call changed so
 * far, so the read sees it), a price missing from the cache; and the effects of a proposal or a
 * delegation run after the write, before COMMIT.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import * as schema from '../../db/schema.js';
import { EngineError, invalid, notFound } from '../../errors.js';
import { approvalStanding } from '../approvals/index.js';
import {
  type Actor,
  type EngineContext,
  type Executor,
  isUuid,
  pgClientOf,
  sameProject,
} from '../common/index.js';
import { type JournalStepInput, precheck } from './input.js';
import { priceUsage } from './limits.js';
import { findReusable } from './reuse.js';
import { RefusalAfterCommit } from './reopen.js';
import { applyStep, type JournalResult, type RuleReads } from './rules.js';
import { beginAndLoad, write } from './sql.js';
import { JournalState } from './state.js';

const MAX_BATCH_STEPS = 50;

/** One step (SPEC §4): locks only the external-task row and never advances the process. */
export async function journalStep(
  ctx: EngineContext,
  actor: Actor,
  input: JournalStepInput,
): Promise<JournalResult> {
  precheck(ctx, actor, input);
  const [out] = await run(ctx, actor, [input], false);
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
  const out = await run(ctx, actor, inputs, true);
  ctx.counters.journalCalls.batch++;
  return out;
}

/** The one path of every journal call: load, apply the rules, write, run the effects, commit. */
async function run(
  ctx: EngineContext,
  actor: Actor,
  inputs: JournalStepInput[],
  batch: boolean,
): Promise<JournalResult[]> {
  const [{ taskId, attempt }] = inputs;
  if (!isUuid(taskId)) throw notFound('external task', taskId);
  const client = await (pgClientOf(ctx.db) as pg.Pool).connect();
  let open = true;
  let broken: Error | undefined;
  try {
    // a guard read needs the call before it; a proposal, the precondition read before it (its facts)
    const sequences = inputs.flatMap((i) =>
      (i.purpose && i.purpose !== 'CALL') || i.state === 'PROPOSED'
        ? [i.sequence - 1, i.sequence]
        : [i.sequence],
    );
    const withUsage = inputs.some((i) => i.kind === 'MODEL_CALL' && i.state === 'STARTED');
    const row = await beginAndLoad(client, taskId, attempt, sequences, withUsage);
    if (!row || !sameProject(actor, row.projectId as string)) throw notFound('external task', taskId);
    const state = JournalState.fromLoad(row);
    const db = onConnection(client);
    const { out, refusal } = await applyAll(state, ctx, actor, readsOf(client, state, db), inputs, batch);
    const effects = state.effects;
    await write(client, state.takeChanges(), effects.length === 0);
    if (effects.length > 0) {
      for (const effect of effects) await effect(db());
      await client.query('COMMIT');
    }
    open = false;
    if (refusal) throw refusal;
    return out;
  } catch (e) {
    if (open) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
    throw e;
  } finally {
    client.release(broken);
  }
}

/**
 * drizzle on the call's own connection, made when first needed: for the rare reads and the effects.
 * Never its transaction(): the call's transaction is already open on this connection.
 */
function onConnection(client: pg.PoolClient): () => Executor {
  let db: Executor | undefined;
  return () => {
    db ??= drizzle(client, { schema }) as unknown as Executor;
    return db;
  };
}

function readsOf(client: pg.PoolClient, state: JournalState, db: () => Executor): RuleReads {
  return {
    async reusable(task, sequence, digest) {
      // the read must see this call's earlier steps: write them first (same transaction)
      await write(client, state.takeChanges(), false);
      return findReusable(db(), task, sequence, digest);
    },
    price: (model, usage) => priceUsage(db(), model, usage),
    approval: (approvalId) => approvalStanding(db(), approvalId),
  };
}

/** Applies the steps in order; a refusal that commits its change ends the call after the write. */
async function applyAll(
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
      // a refusal after commit says so: what the call changed before it (e.g. a batch's earlier steps) stands
      const refused =
        e instanceof RefusalAfterCommit
          ? new EngineError(e.refusal.code, e.refusal.message, { ...e.refusal.details, committed: true })
          : e;
      const answer = batch ? withIndex(refused, index) : refused;
      if (e instanceof RefusalAfterCommit) return { out, refusal: answer };
      throw answer;
    }
  }
  return { out };
}

function withIndex(e: unknown, index: number): unknown {
  if (!(e instanceof EngineError)) return e;
  return new EngineError(
    e.code,
    `Step ${index} of the batch: ${e.message} ${e.details.committed ? 'The steps before it were journaled.' : 'Nothing of the batch was journaled.'}`,
    { ...e.details, index },
  );
}
