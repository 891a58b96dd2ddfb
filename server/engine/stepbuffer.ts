/**
 * The batch path of the journal: `journalSteps` reads the task and every step the batch touches in ONE
 * statement, applies each step under journalStep's rules to that copy in memory, and writes every step
 * and its history rows in ONE statement at the end — four round trips for the whole batch instead of
 * two per step. Only the common steps take it (model calls, reads, writes started and ended in the
 * batch); a step that needs anything else of the database (an approval, a delegation, reuse from an
 * earlier attempt, an unloaded price) asks for `tx`, which throws `SlowPath`: the transaction rolls back
 * and the batch is run again step by step with the direct store, so both paths answer alike.
 */
import { sql } from 'drizzle-orm';
import type { StepRow } from '../db/schema.js';
import { notFound } from '../errors.js';
import type { Actor, Tx } from './context.js';
import { queryPrepared, sameProject } from './context.js';
import type { HistoryEntry } from './history.js';
import { isUuid } from './instances.js';
import { LOCKED_TASK_COLUMNS, type LockedTaskRow, withTaskDates } from './lease.js';
import {
  type ModelUsage,
  type StepChange,
  type StepContext,
  type StepKey,
  type StepStore,
  type StepValues,
  toStepRow,
} from './stepstore.js';

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
    private readonly realTx: Tx,
    private readonly key: BatchKey,
    private readonly task: LockedTaskRow,
    existing: StepRow[],
    private last: StepContext['last'],
    private readonly usage: ModelUsage | null,
  ) {
    for (const r of existing) this.rows.set(r.sequence, r);
  }

  /** Locks the task row and reads the steps at the batch's sequences, the last step and the usage. */
  static async load(tx: Tx, actor: Actor, key: BatchKey): Promise<StepBuffer> {
    if (!isUuid(key.taskId)) throw notFound('external task', key.taskId);
    const [row] = await queryPrepared<Record<string, unknown>>(
      tx,
      sql`SELECT ${LOCKED_TASK_COLUMNS},
          (SELECT jsonb_agg(to_jsonb(s)) FROM steps s WHERE s.task_id = t.id AND s.attempt = ${key.attempt}
             AND s.sequence = ANY(${`{${key.sequences.join(',')}}`}::int[])) AS "existingSteps",
          (SELECT jsonb_build_object('sequence', s.sequence, 'state', s.state) FROM steps s
            WHERE s.task_id = t.id AND s.attempt = ${key.attempt} ORDER BY s.sequence DESC LIMIT 1) AS "lastStep",
          CASE WHEN ${key.withUsage} THEN (
            SELECT jsonb_build_object(
              'turns', count(*) FILTER (WHERE s.attempt = t.attempt AND s.state = 'COMPLETED'),
              'tokens', coalesce(sum((s.usage->>'totalTokens')::bigint) FILTER (WHERE s.attempt = t.attempt), 0),
              'cost', coalesce(sum(s.cost_usd), 0))
            FROM steps s WHERE s.task_id = t.id AND s.kind = 'MODEL_CALL') END AS "modelUsage"
        FROM external_tasks t WHERE t.id = ${key.taskId} FOR UPDATE OF t`,
    );
    if (!row || !sameProject(actor, row.projectId as string)) throw notFound('external task', key.taskId);
    withTaskDates(row);
    const { existingSteps, lastStep, modelUsage, ...task } = row;
    const u = modelUsage as Record<string, unknown> | null;
    return new StepBuffer(
      tx,
      key,
      task as unknown as LockedTaskRow,
      ((existingSteps as Record<string, unknown>[] | null) ?? []).map(toStepRow),
      (lastStep as StepContext['last']) ?? undefined,
      u ? { turns: Number(u.turns), tokens: Number(u.tokens), cost: Number(u.cost) } : null,
    );
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
    if (withUsage && !this.usage) throw new SlowPath();
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

  /** Writes every changed step (insert or update) and the history rows, in order, in one statement. */
  async flush(): Promise<void> {
    if (this.dirty.size === 0) return;
    const stepsJson = [...this.dirty].map((seq) => {
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
    const historyJson = this.history.map((h, ord) => ({
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
    await queryPrepared(
      this.realTx,
      sql`WITH s AS (
          INSERT INTO steps (task_id, attempt, sequence, kind, state, tool_ref, policy, model, digest, request_enc,
                             response_enc, error_enc, key_id, idempotency_key, comment, reused, usage, cost_usd, approval_id)
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(stepsJson)}::jsonb) AS x(task_id uuid, attempt int, sequence int,
            kind text, state text, tool_ref text, policy text, model text, digest text, request_enc text, response_enc text,
            error_enc text, key_id text, idempotency_key text, comment text, reused boolean, usage jsonb,
            cost_usd double precision, approval_id uuid)
          ON CONFLICT (task_id, attempt, sequence) DO UPDATE SET state = EXCLUDED.state,
            response_enc = EXCLUDED.response_enc, error_enc = EXCLUDED.error_enc,
            idempotency_key = EXCLUDED.idempotency_key, usage = EXCLUDED.usage, cost_usd = EXCLUDED.cost_usd,
            updated_at = now()
          RETURNING 1),
        h AS (
          INSERT INTO history (project_id, process_instance_id, event_type, actor, task_id, attempt, sequence,
                               approval_id, data, seq, prev_hash, hash)
          SELECT project_id, process_instance_id, event_type, actor, task_id, attempt, sequence, approval_id, data, 0, '', ''
          FROM jsonb_to_recordset(${JSON.stringify(historyJson)}::jsonb) AS y(ord int, project_id text,
            process_instance_id uuid, event_type text, actor text, task_id uuid, attempt int, sequence int,
            approval_id uuid, data jsonb)
          ORDER BY ord
          RETURNING 1)
        SELECT (SELECT count(*) FROM s) AS steps, (SELECT count(*) FROM h) AS history`,
    );
  }
}
