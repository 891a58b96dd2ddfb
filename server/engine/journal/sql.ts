/**
 * The journal's two statements: the load (lock the task, read the steps a call touches, the last step
 * and the usage so far) and the write (every changed step and its history rows). The buffered path runs
 * them as SQL-level prepared statements (`PREPARE … / EXECUTE …`): prepared once per connection, they
 * keep their plans, and being plain SQL they travel in simple-protocol queries together with BEGIN and
 * COMMIT — two round trips per journal call (`BEGIN; EXECUTE load` and `EXECUTE write; COMMIT`). The
 * step-by-step path runs the same load inside its drizzle transaction.
 */
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { StepRow } from '../../db/schema.js';
import { pgClientOf, type Tx } from '../common/index.js';
import { LOCKED_TASK_COLUMNS, type LockedTaskRow, withTaskDates } from '../lease/index.js';

const LOCKED_COLUMNS = new PgDialect().sqlToQuery(LOCKED_TASK_COLUMNS).sql;

/**
 * Whether the agent node has a limit (as `hasLimits` in limits.ts): only then is the usage so far
 * summed (a sum over every model call of the task).
 */
const HAS_LIMITS = `coalesce(jsonb_strip_nulls(t.agent_work->'limits') ?| array['maxTurns', 'maxTokensTotal', 'budgetUsd'], false)`;

/** $1 task id, $2 attempt, $3 the batch's sequences, $4 whether a model call starts (limits are checked). */
const LOAD = `SELECT ${LOCKED_COLUMNS},
    (SELECT jsonb_agg(to_jsonb(s)) FROM steps s WHERE s.task_id = t.id AND s.attempt = $2
       AND s.sequence = ANY($3)) AS "existingSteps",
    (SELECT jsonb_build_object('sequence', s.sequence, 'state', s.state) FROM steps s
      WHERE s.task_id = t.id AND s.attempt = $2 ORDER BY s.sequence DESC LIMIT 1) AS "lastStep",
    CASE WHEN $4 AND ${HAS_LIMITS} THEN (SELECT jsonb_build_object(
        'turns', count(*) FILTER (WHERE s.attempt = t.attempt AND s.state = 'COMPLETED'),
        'tokens', coalesce(sum((s.usage->>'totalTokens')::bigint) FILTER (WHERE s.attempt = t.attempt), 0),
        'cost', coalesce(sum(s.cost_usd), 0))
      FROM steps s WHERE s.task_id = t.id AND s.kind = 'MODEL_CALL') END AS "modelUsage"
  FROM external_tasks t WHERE t.id = $1 FOR UPDATE OF t`;

/** $1 the changed steps (inserted or updated), $2 their history rows in order (the chain trigger runs). */
const WRITE = `WITH s AS (
    INSERT INTO steps (task_id, attempt, sequence, kind, state, tool_ref, policy, model, digest, request_enc,
                       response_enc, error_enc, key_id, idempotency_key, comment, reused, usage, cost_usd, approval_id)
    SELECT * FROM jsonb_to_recordset($1) AS x(task_id uuid, attempt int, sequence int, kind text, state text,
      tool_ref text, policy text, model text, digest text, request_enc text, response_enc text, error_enc text,
      key_id text, idempotency_key text, comment text, reused boolean, usage jsonb, cost_usd double precision,
      approval_id uuid)
    ON CONFLICT (task_id, attempt, sequence) DO UPDATE SET state = EXCLUDED.state,
      response_enc = EXCLUDED.response_enc, error_enc = EXCLUDED.error_enc,
      idempotency_key = EXCLUDED.idempotency_key, usage = EXCLUDED.usage, cost_usd = EXCLUDED.cost_usd,
      updated_at = now()
    RETURNING 1),
  h AS (
    INSERT INTO history (project_id, process_instance_id, event_type, actor, task_id, attempt, sequence,
                         approval_id, data, seq, prev_hash, hash)
    SELECT project_id, process_instance_id, event_type, actor, task_id, attempt, sequence, approval_id, data, 0, '', ''
    FROM jsonb_to_recordset($2) AS y(ord int, project_id text, process_instance_id uuid, event_type text,
      actor text, task_id uuid, attempt int, sequence int, approval_id uuid, data jsonb)
    ORDER BY ord
    RETURNING 1)
  SELECT (SELECT count(*) FROM s) AS steps, (SELECT count(*) FROM h) AS history`;

// (the pool sets plan_cache_mode = force_generic_plan: see db/client.ts)
const PREPARE = `PREPARE abada_journal_load (uuid, int, int[], boolean) AS ${LOAD};
PREPARE abada_journal_write (jsonb, jsonb) AS ${WRITE};`;

/** Connections (pg clients) that hold the two prepared statements. */
const prepared = new WeakSet<object>();

/**
 * `BEGIN` and the load in one round trip (the statements are prepared first on a new connection).
 * Values are inlined: the caller validated the UUID and the integers.
 */
export async function beginAndLoad(
  client: pg.PoolClient,
  taskId: string,
  attempt: number,
  sequences: number[],
  withUsage: boolean,
): Promise<Record<string, unknown> | undefined> {
  const load = `BEGIN; EXECUTE abada_journal_load('${taskId}', ${attempt}, '{${sequences.join(',')}}', ${withUsage})`;
  let results: pg.QueryResult[];
  try {
    results = (await client.query(prepared.has(client) ? load : `${PREPARE}\n${load}`)) as never;
  } catch (e) {
    // Our record of the connection was wrong (a PREPARE outlived a failed query, or the session was
    // reset): roll back whatever began, correct the record and try once more.
    const code = (e as { code?: string }).code;
    if (code !== '42P05' && code !== '26000') throw e;
    await client.query('ROLLBACK');
    if (code === '42P05') prepared.add(client);
    else prepared.delete(client);
    results = (await client.query(prepared.has(client) ? load : `${PREPARE}\n${load}`)) as never;
  }
  prepared.add(client);
  return results[results.length - 1].rows[0] as Record<string, unknown> | undefined;
}

/** The write (when there is one) and COMMIT in one round trip. */
export async function writeAndCommit(client: pg.PoolClient, steps: unknown[], history: unknown[]) {
  const write =
    steps.length > 0
      ? `EXECUTE abada_journal_write(${pg.escapeLiteral(JSON.stringify(steps))}, ${pg.escapeLiteral(JSON.stringify(history))}); `
      : '';
  await client.query(`${write}COMMIT`);
}

/** The load inside a transaction of the step-by-step path (a protocol-level named statement). */
export async function loadInTransaction(
  tx: Tx,
  taskId: string,
  attempt: number,
  sequences: number[],
  withUsage: boolean,
): Promise<Record<string, unknown> | undefined> {
  const res = await pgClientOf(tx).query({
    name: 'abada_journal_load_tx',
    text: LOAD,
    values: [taskId, attempt, sequences, withUsage],
  });
  return res.rows[0] as Record<string, unknown> | undefined;
}

export interface Loaded {
  task: LockedTaskRow;
  /** the steps at the sequences asked for that exist */
  existing: StepRow[];
  last: { sequence: number; state: StepRow['state'] } | undefined;
  /** null when not asked for, or when the node has no limits */
  usage: { turns: number; tokens: number; cost: number } | null;
}

/** The load's row as the journal uses it. */
export function parseLoad(row: Record<string, unknown>): Loaded {
  withTaskDates(row);
  const { existingSteps, lastStep, modelUsage, ...task } = row;
  const u = modelUsage as Record<string, unknown> | null;
  return {
    task: task as unknown as LockedTaskRow,
    existing: ((existingSteps as Record<string, unknown>[] | null) ?? []).map(toStepRow),
    last: (lastStep as Loaded['last']) ?? undefined,
    usage: u ? { turns: Number(u.turns), tokens: Number(u.tokens), cost: Number(u.cost) } : null,
  };
}

/** Maps a `steps` row as PostgreSQL returns it (snake_case, JSON) to the drizzle row shape. */
export function toStepRow(r: Record<string, unknown>): StepRow {
  return {
    taskId: r.task_id as string,
    attempt: r.attempt as number,
    sequence: r.sequence as number,
    kind: r.kind as StepRow['kind'],
    state: r.state as StepRow['state'],
    toolRef: (r.tool_ref as string | null) ?? null,
    policy: (r.policy as StepRow['policy']) ?? null,
    model: (r.model as string | null) ?? null,
    digest: r.digest as string,
    requestEnc: r.request_enc as string,
    responseEnc: (r.response_enc as string | null) ?? null,
    errorEnc: (r.error_enc as string | null) ?? null,
    keyId: r.key_id as string,
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    comment: (r.comment as string | null) ?? null,
    reused: Boolean(r.reused),
    usage: r.usage ?? null,
    costUsd: r.cost_usd == null ? null : Number(r.cost_usd),
    approvalId: (r.approval_id as string | null) ?? null,
    createdAt: new Date(r.created_at as string),
    updatedAt: new Date(r.updated_at as string),
  };
}
