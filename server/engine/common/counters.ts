/**
 * What an engine process counts in memory and /metrics renders next to the database gauges. One object
 * per engine (created in server/app.ts, carried in the EngineContext), so two engines in one process —
 * the tests run several — count apart, and no module holds mutable state.
 */
export interface EngineCounters {
  /** journal calls committed by this process: single journalStep calls and journalSteps batches */
  journalCalls: { single: number; batch: number };
  /** journalBatch requests this process accepted, and the entries (tasks' calls) they carried */
  journalBatches: { requests: number; entries: number };
  /**
   * decideApproval and revokeApproval requests with no valid credential: no actor, so no history row
   * (SPEC §14.5); counted here and logged instead
   */
  unauthenticatedDecisions: number;
  /** a fast path that handed a request to its slow path, by `path` and the named `reason` */
  fastPathFallbacks: Map<string, number>;
}

/** Counts one fallback of a fast path to its slow path (abada_fast_path_fallbacks_total). */
export function countFallback(counters: EngineCounters, path: string, reason: string): void {
  const key = `${path}\u0000${reason}`;
  counters.fastPathFallbacks.set(key, (counters.fastPathFallbacks.get(key) ?? 0) + 1);
}

export function createCounters(): EngineCounters {
  return {
    journalCalls: { single: 0, batch: 0 },
    journalBatches: { requests: 0, entries: 0 },
    unauthenticatedDecisions: 0,
    fastPathFallbacks: new Map(),
  };
}
