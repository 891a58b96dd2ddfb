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
}

export function createCounters(): EngineCounters {
  return {
    journalCalls: { single: 0, batch: 0 },
    journalBatches: { requests: 0, entries: 0 },
    unauthenticatedDecisions: 0,
  };
}
