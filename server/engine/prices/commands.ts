/**
 * setModelPrice and the prices as operators read them (SPEC §15.6). Prices are engine-wide (one table
 * for every project): a change is a new row valid from now, never an update, so what a past call cost
 * can always be explained.
 */
import { sql } from 'drizzle-orm';
import { EngineError } from '../../errors.js';
import { type Actor, type EngineContext, type Executor, query } from '../common/index.js';
import { forgetPrices } from './table.js';

export interface SetModelPriceInput {
  model: string;
  inputUsdPerMTok: number;
  outputUsdPerMTok: number;
}

export interface ModelPriceView {
  model: string;
  inputUsdPerMTok: number;
  outputUsdPerMTok: number;
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
  forgetPrices();
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
