/**
 * The buffered path of the journal: a journal call reads the task and every step it touches in ONE
 * statement, applies each step under journalStep's rules to that copy in memory, and writes every step
 * and its history rows in ONE statement at the end — two round trips for the whole batch
 * (journalsql.ts) instead of two per step plus BEGIN and COMMIT. Only the common steps take it
 * (model calls, reads, writes started and ended in the batch); a step that needs anything else of the database (an approval, a delegation, reuse from an
 * earlier attempt, an unloaded price) asks for `tx`, which throws `SlowPath`: the transaction rolls back
 * and the batch is run again step by step with the direct store, so both paths answer alike.
 */
import type pg from 'pg';
import type { StepRow } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { pgClientOf, sameProject } from '../common/index.js';
import type { HistoryEntry } from '../history/index.js';
import { isUuid } from '../common/index.js';
import { beginAndLoad, parseLoad, writeAndCommit } from './sql.js';
import type { LockedTaskRow } from '../lease/index.js';
import type { ModelUsage, StepChange, StepContext, StepKey, StepStore, StepValues } from './store.js';
import { invalid } from './input.js';

/** Thrown by the buffered store when a step needs the database: re-run the batch step by step. */
export class SlowPath extends Error {
  constructor() {
    super('this batch needs the step-by-step path');
  }
}

export interface BatchKey {
  taskId: string;
  attempt: number;
  sequences: number[];
  withUsage: boolean;
}

export class StepBuffer implements StepStore {
  private readonly rows = new Map<number, StepRow>();
  private readonly dirty = new Set<number>();
  private readonly history: HistoryEntry[] = [];

  private constructor(
    private readonly key: BatchKey,
    private readonly task: LockedTaskRow,
    existing: StepRow[],
    private last: StepContext['last'],
    private readonly usage: ModelUsage | null,
  ) {
    for (const r of existing) this.rows.set(r.sequence, r);
  }

  /**
   * Runs `fn` on a buffer of the batch in its own transaction of two round trips (`BEGIN; load` and
   * `write; COMMIT`). Anything thrown rolls the transaction back.
   */
  static async run<T>(
    ctx: EngineContext,
    actor: Actor,
    key: BatchKey,
    fn: (buffer: StepBuffer) => Promise<T>,
  ): Promise<T> {
    if (!isUuid(key.taskId)) throw notFound('external task', key.taskId);
    if (![key.attempt, ...key.sequences].every(Number.isSafeInteger))
      throw invalid('attempt and sequence are integers.', 'sequence');
    const client = await (pgClientOf(ctx.db) as pg.Pool).connect();
    let open = true;
    let broken: Error | undefined;
    try {
      const row = await beginAndLoad(client, key.taskId, key.attempt, key.sequences, key.withUsage);
      if (!row || !sameProject(actor, row.projectId as string)) throw notFound('external task', key.taskId);
      const buffer = StepBuffer.fromRow(key, row);
      const out = await fn(buffer);
      await writeAndCommit(client, ...buffer.changes());
      open = false;
      return out;
    } catch (e) {
      if (open) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
      throw e;
    } finally {
      client.release(broken);
    }
  }

  private static fromRow(key: BatchKey, row: Record<string, unknown>): StepBuffer {
    const { task, existing, last, usage } = parseLoad(row);
    return new StepBuffer(key, task, existing, last, usage);
  }

  get tx(): Tx {
    throw new SlowPath();
  }

  async read(
    _actor: Actor,
    taskId: string,
    attempt: number,
    sequence: number,
    withUsage: boolean,
  ): Promise<StepContext> {
    const k = this.key;
    if (taskId !== k.taskId || attempt !== k.attempt || !k.sequences.includes(sequence)) throw new SlowPath();
    // (usage is null when the node has no limits: nothing reads it then)
    return {
      task: this.task,
      existing: this.rows.get(sequence),
      last: this.last ? { ...this.last } : undefined,
      usage: withUsage && this.usage ? { ...this.usage } : null,
    };
  }

  async insert(v: StepValues, h: HistoryEntry): Promise<StepRow> {
    const now = new Date();
    const row: StepRow = {
      toolRef: null,
      policy: null,
      model: null,
      responseEnc: null,
      errorEnc: null,
      idempotencyKey: null,
      comment: null,
      reused: false,
      usage: null,
      costUsd: null,
      approvalId: null,
      ...v,
      createdAt: now,
      updatedAt: now,
    };
    return this.put(undefined, row, h);
  }

  async update(key: StepKey, set: StepChange, h: HistoryEntry): Promise<StepRow> {
    const old = this.rows.get(key.sequence);
    if (!old || old.taskId !== key.taskId || old.attempt !== key.attempt) throw new SlowPath();
    return this.put(old, { ...old, ...set, updatedAt: new Date() }, h);
  }

  private put(old: StepRow | undefined, row: StepRow, h: HistoryEntry): StepRow {
    this.rows.set(row.sequence, row);
    this.dirty.add(row.sequence);
    this.history.push({ ...h, eventType: `STEP_${row.state}` });
    if (!this.last || row.sequence >= this.last.sequence)
      this.last = { sequence: row.sequence, state: row.state };
    if (this.usage && row.kind === 'MODEL_CALL') {
      const done = (r: StepRow | undefined) => (r?.state === 'COMPLETED' ? 1 : 0);
      const tokens = (r: StepRow | undefined) =>
        Number((r?.usage as { totalTokens?: number } | null)?.totalTokens ?? 0);
      this.usage.turns += done(row) - done(old);
      this.usage.tokens += tokens(row) - tokens(old);
      this.usage.cost += (row.costUsd ?? 0) - (old?.costUsd ?? 0);
    }
    return row;
  }

  /** The changed steps (final rows) and the history rows, in order, for the write. */
  private changes(): [unknown[], unknown[]] {
    const steps = [...this.dirty].map((seq) => {
      const r = this.rows.get(seq)!;
      return {
        task_id: r.taskId,
        attempt: r.attempt,
        sequence: r.sequence,
        kind: r.kind,
        state: r.state,
        tool_ref: r.toolRef,
        policy: r.policy,
        model: r.model,
        digest: r.digest,
        request_enc: r.requestEnc,
        response_enc: r.responseEnc,
        error_enc: r.errorEnc,
        key_id: r.keyId,
        idempotency_key: r.idempotencyKey,
        comment: r.comment,
        reused: r.reused,
        usage: r.usage,
        cost_usd: r.costUsd,
        approval_id: r.approvalId,
      };
    });
    const history = this.history.map((h, ord) => ({
      ord,
      project_id: h.projectId,
      process_instance_id: h.processInstanceId,
      event_type: h.eventType,
      actor: h.actor,
      task_id: h.taskId ?? null,
      attempt: h.attempt ?? null,
      sequence: h.sequence ?? null,
      approval_id: h.approvalId ?? null,
      data: h.data ?? {},
    }));
    return [steps, history];
  }
}
