/**
 * What an engine process counts in memory for /metrics: one object per engine (in the EngineContext), so
 * two engines in one process (the tests run several) count apart and no module holds mutable state.
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
  /**
   * failed rounds of the background loops, by cause: `unavailable` (server/errors.ts isUnavailable) or
   * `error`; each loop tries again next round, so a count that keeps rising is a loop not getting done
   */
  backgroundFailures: Record<BackgroundLoop, { unavailable: number; error: number }>;
}

/** Counts one fallback of a fast path to its slow path (abada_fast_path_fallbacks_total). */
export function countFallback(counters: EngineCounters, path: string, reason: string): void {
  const key = `${path}\u0000${reason}`;
  counters.fastPathFallbacks.set(key, (counters.fastPathFallbacks.get(key) ?? 0) + 1);
}

/** The engine's background loops: SLA and expiry sweeps, durable jobs, stream pruning, webhook sends. */
const BACKGROUND_LOOPS = ['sweeps', 'jobs', 'stream_pruning', 'webhooks'] as const;
export type BackgroundLoop = (typeof BACKGROUND_LOOPS)[number];

export function createCounters(): EngineCounters {
  return {
    journalCalls: { single: 0, batch: 0 },
    journalBatches: { requests: 0, entries: 0 },
    unauthenticatedDecisions: 0,
    fastPathFallbacks: new Map(),
    backgroundFailures: Object.fromEntries(
      BACKGROUND_LOOPS.map((loop) => [loop, { unavailable: 0, error: 0 }]),
    ) as EngineCounters['backgroundFailures'],
  };
}
