/**
 * Limits and engine-side pricing (SPEC §4). Checked when a MODEL_CALL is journaled STARTED: turns and
 * tokens count this attempt (the conversation being built), the budget counts every attempt of the task
 * (money spent is spent). A turn is a model call that answered; a failed call to an unavailable model
 * spends none.
 */
import { sql } from 'drizzle-orm';
import { EngineError } from '../errors.js';
import type { Executor, Tx } from './context.js';
import { query } from './context.js';
import type { LockedTaskRow } from './lease.js';

export interface Usage {
  inputTokens?: number | null;
  outputTokens?: number | null;
  totalTokens?: number | null;
}

export interface Limits {
  maxTurns: number | null;
  maxTokensTotal: number | null;
  budgetUsd: number | null;
}

export async function checkModelLimits(tx: Tx, task: LockedTaskRow, limits: Limits): Promise<void> {
  if (limits.maxTurns == null && limits.maxTokensTotal == null && limits.budgetUsd == null) return;
  const [u] = await query<{ turns: number; tokens: number; cost: number }>(
    tx,
    sql`SELECT count(*) FILTER (WHERE attempt = ${task.attempt} AND state = 'COMPLETED')::int AS turns,
               coalesce(sum((usage->>'totalTokens')::bigint) FILTER (WHERE attempt = ${task.attempt}), 0)::bigint AS tokens,
               coalesce(sum(cost_usd), 0)::float8 AS cost
        FROM steps WHERE task_id = ${task.id} AND kind = 'MODEL_CALL'`,
  );
  const exceeded = (limit: string, used: number, max: number) =>
    new EngineError(
      'LIMIT_EXCEEDED',
      `The ${limit} limit of this agent node is reached (${used} of ${max}); finish with what you have or fail the attempt.`,
      {
        limit,
        used,
        max,
      },
    );
  if (limits.maxTurns != null && u.turns >= limits.maxTurns)
    throw exceeded('max_turns', u.turns, limits.maxTurns);
  if (limits.maxTokensTotal != null && Number(u.tokens) >= limits.maxTokensTotal)
    throw exceeded('max_tokens_total', Number(u.tokens), limits.maxTokensTotal);
  if (limits.budgetUsd != null && u.cost >= limits.budgetUsd)
    throw exceeded('budget_usd', Math.round(u.cost * 1e6) / 1e6, limits.budgetUsd);
}

function nonNeg(n: number | null | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** Prices a model call with the price in force now; an unknown model costs null (and cannot hit the budget). */
export async function priceUsage(ex: Executor, model: string, usage: Usage) {
  const inputTokens = nonNeg(usage.inputTokens);
  const outputTokens = nonNeg(usage.outputTokens);
  // never below input + output: an under-reported total would slip past max_tokens_total
  const totalTokens = Math.max(nonNeg(usage.totalTokens), inputTokens + outputTokens);
  const [p] = await query<{ i: number; o: number }>(
    ex,
    sql`SELECT input_per_mtok_usd AS i, output_per_mtok_usd AS o FROM model_prices
        WHERE model = ${model} AND effective_from <= now() ORDER BY effective_from DESC LIMIT 1`,
  );
  const costUsd = p ? (inputTokens * p.i + outputTokens * p.o) / 1e6 : null;
  return { usage: { inputTokens, outputTokens, totalTokens }, costUsd };
}
