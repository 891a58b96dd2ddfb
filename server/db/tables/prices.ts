import { doublePrecision, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';

/** Engine-side model prices per million tokens, one row per change: the row in force at a call prices it. */
export const modelPrices = pgTable(
  'model_prices',
  {
    model: text('model').notNull(),
    effectiveFrom: ts('effective_from').notNull(),
    inputPerMTokUsd: doublePrecision('input_per_mtok_usd').notNull(),
    outputPerMTokUsd: doublePrecision('output_per_mtok_usd').notNull(),
    /** who set the price (setModelPrice); null for prices seeded by a migration */
    setBy: text('set_by'),
  },
  (t) => [primaryKey({ columns: [t.model, t.effectiveFrom] })],
);
