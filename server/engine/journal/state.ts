/**
 * What one journal call works on: the locked task and the steps it touches, loaded in one statement
 * (sql.ts), changed in memory by the rules (rules.ts) and written back in one statement, with the
 * history rows in the order the rules made them and the effects (opening an approval, starting a
 * delegated child) that run after the write, in the same transaction.
 */
import { type HistoryEntry, historyRecords, stepFromRecord, stepRecord } from '../../db/rows.js';
import type { StepRow } from '../../db/schema.js';
import type { Executor } from '../common/index.js';
import { attemptHistory, type LockedTaskRow, withTaskDates } from '../lease/index.js';

type LastStep = Pick<StepRow, 'sequence' | 'state' | 'purpose'>;

/** The usage of the task's model calls so far (for limits). */
type ModelUsage = { turns: number; tokens: number; cost: number };

/** A change beyond the journal's own rows, run after the write in the journal's transaction. */
export type Effect = (db: Executor) => Promise<void>;

export class JournalState {
  private readonly rows = new Map<number, StepRow>();
  private readonly dirty = new Set<number>();
  /** steps this call inserted (not yet in the database when the rules look at them) */
  private readonly inserted = new Set<number>();
  private history: HistoryEntry[] = [];
  readonly effects: Effect[] = [];

  private constructor(
    readonly task: LockedTaskRow,
    existing: StepRow[],
    /** the attempt's last step as it stands now (replaced, never changed in place) */
    public last: Readonly<LastStep> | undefined,
    /** when the last step is a guard read: the call it guards (SPEC §11) */
    private guardedSeq: number | undefined,
    private readonly usageSoFar: ModelUsage | null,
  ) {
    for (const r of existing) this.rows.set(r.sequence, r);
  }

  static fromLoad(row: Record<string, unknown>): JournalState {
    withTaskDates(row);
    const { existingSteps, lastStep, modelUsage, ...task } = row;
    const u = modelUsage as Record<string, unknown> | null;
    const last = lastStep as
      | (LastStep & { row?: Record<string, unknown>; call?: Record<string, unknown> })
      | null;
    const loaded = ((existingSteps as Record<string, unknown>[] | null) ?? []).map(stepFromRecord);
    // a guard read as the last step comes with the call it guards (sql.ts)
    const guard = last?.row ? stepFromRecord(last.row) : undefined;
    const call = last?.call ? stepFromRecord(last.call) : undefined;
    for (const extra of [guard, call])
      if (extra && !loaded.some((r) => r.sequence === extra.sequence)) loaded.push(extra);
    return new JournalState(
      task as unknown as LockedTaskRow,
      loaded,
      last ? { sequence: last.sequence, state: last.state, purpose: last.purpose ?? 'CALL' } : undefined,
      call?.sequence,
      u ? { turns: Number(u.turns), tokens: Number(u.tokens), cost: Number(u.cost) } : null,
    );
  }

  step(sequence: number): StepRow | undefined {
    return this.rows.get(sequence);
  }

  /** The attempt's last CALL as it stands now: the last step, or the call its guard read belongs to. */
  lastCall(): StepRow | undefined {
    const last = this.last;
    if (!last) return undefined;
    return this.rows.get(last.purpose === 'CALL' ? last.sequence : (this.guardedSeq ?? -1));
  }

  /** Whether this call inserted the step (it is not in the database yet). */
  insertedHere(sequence: number): boolean {
    return this.inserted.has(sequence);
  }

  /** The usage of model calls so far, this call's changes included (null: not loaded or no limits). */
  get usage(): ModelUsage | null {
    return this.usageSoFar ? { ...this.usageSoFar } : null;
  }

  /** Records a step's new or changed row with its history rows, which join the chain in the order given. */
  put(row: StepRow, history: HistoryEntry[]): StepRow {
    const old = this.rows.get(row.sequence);
    if (!old) this.inserted.add(row.sequence);
    this.rows.set(row.sequence, row);
    this.dirty.add(row.sequence);
    this.history.push(...history);
    if (!this.last || row.sequence >= this.last.sequence) {
      // a new guard read belongs to the call open before it (the rules checked that)
      if (row.purpose !== 'CALL' && row.sequence > (this.last?.sequence ?? 0))
        this.guardedSeq = this.lastCall()?.sequence;
      this.last = { sequence: row.sequence, state: row.state, purpose: row.purpose };
    }
    if (this.usageSoFar && row.kind === 'MODEL_CALL') {
      const done = (r: StepRow | undefined) => (r?.state === 'COMPLETED' ? 1 : 0);
      const tokens = (r: StepRow | undefined) => Number(r?.usage?.totalTokens ?? 0);
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

  after(effect: Effect): void {
    this.effects.push(effect);
  }

  /**
   * The changed steps and unwritten history rows as the write's records; taking clears them, so a write
   * mid-call (before a read that must see the rows) and the final write never write a row twice.
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
    ...attemptHistory(task, `worker:${workerId}`),
    eventType: `STEP_${row.state}`,
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
