/**
 * What one journal call works on: the locked task and the steps it touches, loaded in one statement
 * (sql.ts), changed in memory by the rules (rules.ts), and written back in one statement. The state also
 * keeps the history rows in the order the rules made them, and the effects — the few changes beyond the
 * step and its history row (opening an approval, starting a delegated child) — that run after the write,
 * in the same transaction.
 */
import { type HistoryEntry, historyRecords, stepFromRecord, stepRecord } from '../../db/rows.js';
import type { StepRow } from '../../db/schema.js';
import type { Executor } from '../common/index.js';
import { type LockedTaskRow, withTaskDates } from '../lease/index.js';
import type { StepState } from './input.js';

/** The usage of the task's model calls so far (for limits); null when the node has no limits. */
export interface ModelUsage {
  turns: number;
  tokens: number;
  cost: number;
}

/** A change beyond the journal's own rows, run after the write in the journal's transaction. */
export type Effect = (db: Executor) => Promise<void>;

export class JournalState {
  private readonly rows = new Map<number, StepRow>();
  private readonly dirty = new Set<number>();
  private history: HistoryEntry[] = [];
  readonly effects: Effect[] = [];

  private constructor(
    readonly task: LockedTaskRow,
    existing: StepRow[],
    private lastStep: { sequence: number; state: StepState } | undefined,
    private readonly usageSoFar: ModelUsage | null,
  ) {
    for (const r of existing) this.rows.set(r.sequence, r);
  }

  /** The load statement's row (sql.ts) as a state. */
  static fromLoad(row: Record<string, unknown>): JournalState {
    withTaskDates(row);
    const { existingSteps, lastStep, modelUsage, ...task } = row;
    const u = modelUsage as Record<string, unknown> | null;
    return new JournalState(
      task as unknown as LockedTaskRow,
      ((existingSteps as Record<string, unknown>[] | null) ?? []).map(stepFromRecord),
      (lastStep as { sequence: number; state: StepState } | null) ?? undefined,
      u ? { turns: Number(u.turns), tokens: Number(u.tokens), cost: Number(u.cost) } : null,
    );
  }

  /** The step at `sequence` of the loaded attempt, as it stands now (undefined when there is none). */
  step(sequence: number): StepRow | undefined {
    return this.rows.get(sequence);
  }

  /** The attempt's last step as it stands now. */
  get last(): { sequence: number; state: StepState } | undefined {
    return this.lastStep ? { ...this.lastStep } : undefined;
  }

  /** The usage of model calls so far, this call's changes included (null: not loaded or no limits). */
  get usage(): ModelUsage | null {
    return this.usageSoFar ? { ...this.usageSoFar } : null;
  }

  /**
   * Records a step's new row (a new step, or a change to one) with its history rows, which join the
   * chain in the order given.
   */
  put(row: StepRow, history: HistoryEntry[]): StepRow {
    const old = this.rows.get(row.sequence);
    this.rows.set(row.sequence, row);
    this.dirty.add(row.sequence);
    this.history.push(...history);
    if (!this.lastStep || row.sequence >= this.lastStep.sequence)
      this.lastStep = { sequence: row.sequence, state: row.state };
    if (this.usageSoFar && row.kind === 'MODEL_CALL') {
      const done = (r: StepRow | undefined) => (r?.state === 'COMPLETED' ? 1 : 0);
      const tokens = (r: StepRow | undefined) =>
        Number((r?.usage as { totalTokens?: number } | null)?.totalTokens ?? 0);
      this.usageSoFar.turns += done(row) - done(old);
      this.usageSoFar.tokens += tokens(row) - tokens(old);
      this.usageSoFar.cost += (row.costUsd ?? 0) - (old?.costUsd ?? 0);
    }
    return row;
  }

  /**
   * The task parks (a proposal hands the lease back; a delegation waits for its child): what the effect
   * will write, seen at once by the rest of the call — a step after it no longer holds the lease.
   */
  park(taskState: 'AWAITING_APPROVAL' | 'AWAITING_CHILD'): void {
    Object.assign(this.task, { state: taskState, leaseExpiresAt: null, leaseLive: false });
    // a delegation forgets who held the lease; a proposal keeps it, so its worker may re-send it
    if (taskState === 'AWAITING_CHILD') this.task.leasedBy = null;
  }

  /** Runs after the write, in the same transaction. */
  after(effect: Effect): void {
    this.effects.push(effect);
  }

  /**
   * The changed steps and the history rows not yet written, as the write statement's records; taking
   * them clears them, so a write in the middle of a call (before a read that must see the rows) and the
   * final write never write a row twice.
   */
  takeChanges(): { steps: Record<string, unknown>[]; history: Record<string, unknown>[] } {
    const steps = [...this.dirty].map((seq) => stepRecord(this.rows.get(seq)!));
    const history = historyRecords(this.history);
    this.dirty.clear();
    this.history = [];
    return { steps, history };
  }
}

/** The STEP_<state> history row of a step. */
export function stepHistory(
  task: LockedTaskRow,
  workerId: string,
  row: Pick<StepRow, 'sequence' | 'state' | 'kind' | 'toolRef' | 'model' | 'digest' | 'reused'>,
  extra: Record<string, unknown> = {},
): HistoryEntry {
  return {
    projectId: task.projectId,
    processInstanceId: task.processInstanceId,
    eventType: `STEP_${row.state}`,
    actor: `worker:${workerId}`,
    taskId: task.id,
    attempt: task.attempt,
    sequence: row.sequence,
    data: {
      kind: row.kind,
      toolRef: row.toolRef,
      model: row.model,
      digest: row.digest,
      reused: row.reused || undefined,
      ...extra,
    },
  };
}
