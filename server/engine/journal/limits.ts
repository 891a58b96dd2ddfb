/**
 * An agent node's limits (SPEC §4, §15.6): turns (model calls COMPLETED) and tokens count this attempt
 * (the conversation being built), the budget every attempt of the task (money spent is spent).
 */
import { EngineError } from '../../errors.js';
import type { AgentLimits } from '../../shared/types.js';
import type { JournalState } from './state.js';

function hasLimits(limits: AgentLimits): boolean {
  return limits.maxTurns != null || limits.maxTokensTotal != null || limits.budgetUsd != null;
}

/**
 * LIMIT_EXCEEDED when the usage so far reaches a limit of the task's node. A write is held only to what
 * was spent (tokens and money), not to max_turns: the last turn the node allows may ask for a write.
 */
export function checkLimits(j: JournalState, call: 'model call' | 'write'): void {
  const limits = j.task.agentWork?.limits;
  if (!limits || !hasLimits(limits)) return;
  // the load sums the usage exactly when a step starts on a node with limits (HAS_LIMITS in the load)
  const u = j.usage;
  if (!u) throw new Error('the usage so far was not read for a node with limits');
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
