/**
 * Limits and engine-side pricing (SPEC §4, §15.6). Checked when a MODEL_CALL is journaled STARTED, and
 * when a write is (tokens and money only): turns and tokens count this attempt (the conversation being
 * built), the budget counts every attempt of the task (money spent is spent). A turn is a model call
 * that answered (COMPLETED); a failed call to an unavailable model spends none.
 */
import { sql } from 'drizzle-orm';
import { EngineError } from '../../errors.js';
import { type Executor, query } from '../common/index.js';

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

export function hasLimits(limits: Limits): boolean {
  return limits.maxTurns != null || limits.maxTokensTotal != null || limits.budgetUsd != null;
}

/** What the usage so far is checked for: a model call to start, or a write to send. */
export type LimitedCall = 'model call' | 'write';

/**
 * Throws LIMIT_EXCEEDED (naming the limit, what was used and the maximum) when the usage so far reaches
 * one of the node's limits. A model call is held to all three; a write to the two that measure what
 * was spent (tokens and money), not to max_turns: the last turn the node allows may ask for a write.
 */
export function assertWithinLimits(
  u: { turns: number; tokens: number; cost: number },
  limits: Limits,
  call: LimitedCall = 'model call',
): void {
  const exceeded = (limit: string, used: number, max: number, spent: string) =>
    new EngineError(
      'LIMIT_EXCEEDED',
      `The ${limit} limit of this agent node is reached: ${spent}. This ${call} may not start; finish with what you have or fail the attempt.`,
      { limit, used, max },
    );
  if (call === 'model call' && limits.maxTurns != null && u.turns >= limits.maxTurns)
    throw exceeded('max_turns', u.turns, limits.maxTurns, `${u.turns} of ${limits.maxTurns} turns answered`);
  if (limits.maxTokensTotal != null && u.tokens >= limits.maxTokensTotal)
    throw exceeded(
      'max_tokens_total',
      u.tokens,
      limits.maxTokensTotal,
      `${u.tokens} tokens used of ${limits.maxTokensTotal} this attempt`,
    );
  if (limits.budgetUsd != null && u.cost >= limits.budgetUsd) {
    const spent = Math.round(u.cost * 1e6) / 1e6;
    throw exceeded('budget_usd', spent, limits.budgetUsd, `$${spent} spent of $${limits.budgetUsd}`);
  }
}

function nonNeg(n: number | null | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** Prices a model call with the price in force now; an unknown model costs null (and cannot hit the budget). */
export async function priceUsage(ex: Executor, model: string, usage: Usage) {
  return priced(usage, await priceAt(ex, model, Date.now()));
}

/** priceUsage from the process's price cache alone; undefined when the cache must be (re)loaded. */
export function priceUsageCached(model: string, usage: Usage) {
  const now = Date.now();
  if (!priceCache || now - priceCache.at > PRICE_TTL_MS) return undefined;
  return priced(
    usage,
    priceCache.rows.get(model)?.find((p) => p.from <= now),
  );
}

function priced(usage: Usage, p: { i: number; o: number } | undefined) {
  const inputTokens = nonNeg(usage.inputTokens);
  const outputTokens = nonNeg(usage.outputTokens);
  // never below input + output: an under-reported total would slip past max_tokens_total
  const totalTokens = Math.max(nonNeg(usage.totalTokens), inputTokens + outputTokens);
  const costUsd = p ? (inputTokens * p.i + outputTokens * p.o) / 1e6 : null;
  return { usage: { inputTokens, outputTokens, totalTokens }, costUsd };
}

/*
 * The price table is small and read on every completed model call: it is cached per process and
 * reloaded every 30 s. Prices dated in the future apply from their effective time exactly; a row
 * inserted for the past takes effect here within 30 s.
 */
const PRICE_TTL_MS = 30_000;
let priceCache: { at: number; rows: Map<string, { from: number; i: number; o: number }[]> } | null = null;

async function priceAt(ex: Executor, model: string, now: number) {
  if (!priceCache || now - priceCache.at > PRICE_TTL_MS) {
    const rows = await query<{ model: string; from: Date; i: number; o: number }>(
      ex,
      sql`SELECT model, effective_from AS "from", input_per_mtok_usd AS i, output_per_mtok_usd AS o
          FROM model_prices ORDER BY model, effective_from DESC`,
    );
    const map = new Map<string, { from: number; i: number; o: number }[]>();
    for (const r of rows) {
      const list = map.get(r.model) ?? [];
      list.push({ from: new Date(r.from).getTime(), i: Number(r.i), o: Number(r.o) });
      map.set(r.model, list);
    }
    priceCache = { at: now, rows: map };
  }
  return priceCache.rows.get(model)?.find((p) => p.from <= now);
}
