/**
 * The engine's model prices (SPEC §4, §15.6), engine-wide (one table for every project): each change is
 * a new row valid from its time, never an update, so the history is kept, a call is priced with the row
 * in force when it was journaled, and what a past call cost can always be explained.
 */
import { sql } from 'drizzle-orm';
import { EngineError } from '../../errors.js';
import { type Actor, type EngineContext, type Executor, query } from '../common/index.js';

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
  const now = Date.now();
  if (!priceCache || now - priceCache.at > PRICE_TTL_MS) {
    const rows = await query<{ model: string; from: Date; i: number; o: number }>(
      ex,
      sql`SELECT model, effective_from AS "from", input_per_mtok_usd AS i, output_per_mtok_usd AS o
          FROM model_prices ORDER BY model, effective_from DESC`,
    );
    const map: PriceRows = new Map();
    for (const r of rows) {
      const list = map.get(r.model) ?? [];
      list.push({ from: new Date(r.from).getTime(), i: Number(r.i), o: Number(r.o) });
      map.set(r.model, list);
    }
    priceCache = { at: now, rows: map };
  }
  return priced(priceCache.rows, model, usage, now);
}

/** priceUsage from the process's price cache alone; undefined when the cache must be (re)loaded. */
export function priceUsageCached(model: string, usage: Usage) {
  const now = Date.now();
  if (!priceCache || now - priceCache.at > PRICE_TTL_MS) return undefined;
  return priced(priceCache.rows, model, usage, now);
}

function priced(rows: PriceRows, model: string, usage: Usage, now: number) {
  const p = rows.get(model)?.find((r) => r.from <= now);
  const inputTokens = nonNeg(usage.inputTokens);
  const outputTokens = nonNeg(usage.outputTokens);
  // never below input + output: an under-reported total would slip past max_tokens_total
  const totalTokens = Math.max(nonNeg(usage.totalTokens), inputTokens + outputTokens);
  const costUsd = p ? (inputTokens * p.i + outputTokens * p.o) / 1e6 : null;
  return { usage: { inputTokens, outputTokens, totalTokens }, costUsd };
}

/*
 * The price table, small and read on every completed model call, is cached per process for 30 s. Future
 * prices apply from their time exactly; setModelPrice applies at once here, within 30 s in other engines.
 */
const PRICE_TTL_MS = 30_000;
type PriceRows = Map<string, { from: number; i: number; o: number }[]>;
let priceCache: { at: number; rows: PriceRows } | null = null;

export interface SetModelPriceInput {
  model: string;
  inputUsdPerMTok: number;
  outputUsdPerMTok: number;
}

export interface ModelPriceView extends SetModelPriceInput {
  validFrom: Date;
  /** who set it; null for a price seeded by a migration */
  setBy: string | null;
}

/** Above this a price per million tokens is a typo (the dearest models cost a few hundred dollars). */
const MAX_USD_PER_MTOK = 10_000;
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,199}$/;

function validate(input: SetModelPriceInput): void {
  const errors: { path: string; message: string }[] = [];
  if (!MODEL_NAME.test(input.model ?? ''))
    errors.push({
      path: 'model',
      message: 'a model name as nodes name it (1 to 200 of A-Z a-z 0-9 _ . : / @ + -)',
    });
  for (const path of ['inputUsdPerMTok', 'outputUsdPerMTok'] as const) {
    const v = input[path];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_USD_PER_MTOK)
      errors.push({ path, message: `US dollars per million tokens, from 0 to ${MAX_USD_PER_MTOK}` });
  }
  if (errors.length)
    throw new EngineError(
      'VALIDATION_FAILED',
      `setModelPrice input is invalid: ${errors[0].path} must be ${errors[0].message}.`,
      { errors },
    );
}

const COLUMNS = sql`model, input_per_mtok_usd AS "inputUsdPerMTok", output_per_mtok_usd AS "outputUsdPerMTok",
  effective_from AS "validFrom", set_by AS "setBy"`;

function view(r: ModelPriceView): ModelPriceView {
  return { ...r, validFrom: new Date(r.validFrom) };
}

/** Sets a model's price from now on (admin). The earlier prices stay, as the history. */
export async function setModelPrice(ctx: EngineContext, actor: Actor, input: SetModelPriceInput) {
  if (actor.kind !== 'ADMIN') throw new EngineError('FORBIDDEN', 'Only an admin can set model prices.');
  validate(input);
  // clock_timestamp(): two changes in one transaction are still two rows, in order
  const [row] = await query<ModelPriceView>(
    ctx.db,
    sql`INSERT INTO model_prices (model, effective_from, input_per_mtok_usd, output_per_mtok_usd, set_by)
        VALUES (${input.model}, clock_timestamp(), ${input.inputUsdPerMTok}, ${input.outputUsdPerMTok},
                ${`${actor.kind.toLowerCase()}:${actor.name}`})
        RETURNING ${COLUMNS}`,
  );
  priceCache = null; // the new price applies in this process at once
  return view(row);
}

/**
 * The price in force for each model (or for `model`); with `history`, every price each had, newest
 * first. Prices are not secret: any signed-in principal may read them.
 */
export async function listModelPrices(
  ctx: EngineContext,
  args: { model?: string | null; history?: boolean | null },
): Promise<ModelPriceView[]> {
  const only = args.model ? sql`AND model = ${args.model}` : sql``;
  const rows = await query<ModelPriceView>(
    ctx.db,
    args.history
      ? sql`SELECT ${COLUMNS} FROM model_prices WHERE true ${only} ORDER BY model, effective_from DESC`
      : sql`SELECT DISTINCT ON (model) ${COLUMNS} FROM model_prices
            WHERE effective_from <= now() ${only} ORDER BY model, effective_from DESC`,
  );
  return rows.map(view);
}

/** The models with a price in force now (deploy checks budget_usd nodes against them). */
export async function pricedModels(ex: Executor): Promise<Set<string>> {
  const rows = await query<{ model: string }>(
    ex,
    sql`SELECT DISTINCT model FROM model_prices WHERE effective_from <= now()`,
  );
  return new Set(rows.map((r) => r.model));
}
