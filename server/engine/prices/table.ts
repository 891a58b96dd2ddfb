/**
 * The engine's model prices (SPEC §4, §15.6): each change is a new row valid from its time, so the
 * history is kept and a call is priced with the row in force when it was journaled.
 */
import { sql } from 'drizzle-orm';
import { type Executor, query } from '../common/index.js';

/** What a worker reports of a model call; the engine prices it. */
export interface Usage {
  inputTokens?: number | null;
  outputTokens?: number | null;
  totalTokens?: number | null;
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
 * reloaded every 30 s. Prices dated in the future apply from their effective time exactly; a price set
 * through setModelPrice applies at once in the engine that set it, and within 30 s in the others.
 */
const PRICE_TTL_MS = 30_000;
let priceCache: { at: number; rows: Map<string, { from: number; i: number; o: number }[]> } | null = null;

/** Drops this process's cache (setModelPrice: the new price applies here at once). */
export function forgetPrices(): void {
  priceCache = null;
}

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
