/**
 * `budget_usd` needs prices (SPEC §15.6): the engine prices each model call from its price table, and a
 * model with no price costs nothing, so a budget on it would never stop anything. Deploy refuses a
 * node with a budget whose model, or any fallback model, has no price in force.
 */
import { APL, joinIndex, joinKey } from './errors.js';
import type { Reader } from './fields.js';
import type { AgentLimits } from '../../../shared/types.js';

export function checkPriced(
  { r, np }: { r: Reader; np: string },
  node: { model: string | null; fallbackModels: string[]; limits: AgentLimits },
  priced: ReadonlySet<string> | null,
  /** a model outside ABADA_AGENT_ALLOWED_MODELS has its own error already */
  allowed: string[] | null,
): void {
  if (priced === null || node.limits.budgetUsd == null) return;
  const fallbacks = joinKey(np, 'fallback_models');
  const models = node.fallbackModels.map((m, i): [string, string] => [m, joinIndex(fallbacks, i)]);
  if (node.model !== null) models.unshift([node.model, joinKey(np, 'model')]);
  for (const [model, path] of models) {
    if (priced.has(model) || (allowed !== null && !allowed.includes(model))) continue;
    r.err(
      APL.MODEL_NO_PRICE,
      path,
      `Model "${model}" has no price, so budget_usd could not count its calls. An admin sets one with setModelPrice (abada price set ${model} --input USD --output USD), or remove budget_usd.`,
    );
  }
}
