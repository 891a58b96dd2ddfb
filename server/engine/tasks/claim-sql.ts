/**
 * The claim statement of fetch-and-lock (claim.ts): which tasks a fetch leases, their TASK_LEASED audit
 * rows, and what the worker gets back, in one statement.
 */
import { sql } from 'drizzle-orm';
import { historyChainedCtes, historyInsert } from '../../db/rows.js';
import type { ExternalTaskRow } from '../../db/schema.js';
import type { Actor } from '../common/index.js';
import { TASK_COLUMNS, taskColumns } from '../lease/index.js';

export interface TopicRequest {
  topicName: string;
  lockDurationMs: number;
}

/** A worker's fetch (validated in claim.ts); defined here, beside the statement that reads it. */
export interface FetchInput {
  workerId: string;
  maxTasks: number;
  topics: TopicRequest[];
  asyncResponseTimeoutMs?: number | null;
  projectId?: string | null;
  /** the worker's id for this request: the same request re-sent (no answer came) gets the same claim back */
  requestId?: string | null;
}

/** The columns of a claimed task that the worker's view and the TASK_LEASED row need (mode 'ready-only'). */
const CLAIMED_KEYS = [
  'id',
  'projectId',
  'processInstanceId',
  'nodeId',
  'topicName',
  'attempt',
  'workerId',
  'leaseExpiresAt',
  'agentWork',
] as const satisfies readonly (keyof ExternalTaskRow)[];
const CLAIMED_COLUMNS = taskColumns(CLAIMED_KEYS);

/** A claimed task as mode 'ready-only' returns it (CLAIMED_COLUMNS); mode 'all' returns the whole row. */
export type ClaimedColumns = Pick<ExternalTaskRow, (typeof CLAIMED_KEYS)[number]>;

/*
 * The claim statement. Two candidate sets, each read through its own partial index and locked with
 * FOR UPDATE SKIP LOCKED so concurrent fetchers never wait on each other nor take the same row:
 *  - expired leases (state LEASED, lease_expires_at passed): re-acquired on the SAME attempt, the journal
 *    lets the new worker resume; they go first because someone already started them;
 *  - ready work (state OPEN, available_at passed), by priority then age.
 * The outer LIMIT stops pulling from the second set once enough rows are locked. Ready work is read
 * per topic (a LATERAL index scan of `topic_name = t ORDER BY priority DESC NULLS LAST, available_at`),
 * and the ORDER BY must match the index exactly: with `topic_name = ANY(…)`, or with `priority DESC`
 * (NULLS FIRST, while the index is NULLS LAST), PostgreSQL sorted every open row of the topic on every
 * fetch — 110 ms at 200k open tasks, 600 ms at 1M (found with the bench and EXPLAIN ANALYZE); now
 * 0.1 ms at any backlog. With several topics a fetch may lock up to maxTasks rows per topic for the
 * instant of its transaction; those it does not pick are skipped by concurrent fetchers only until it
 * commits. Finished rows are in neither index, so
 * a large history never slows a fetch.
 *
 * Mode 'ready-only' is the statement a fetch tries first, in its own implicit transaction (BEGIN and
 * COMMIT cost two round trips of the fetch's four): it leases ready work only when no lease on the
 * topics has expired (a one-time probe of the expired-lease index), and answers one row, nothing leased,
 * when one has. Re-acquiring an expired lease needs checks in the same transaction (reacquireIsBlocked),
 * so then the fetch runs mode 'all' in a transaction, as every fetch did before.
 *
 * Mode 'ready-only' returns only the columns the worker's view and the TASK_LEASED row need
 * (CLAIMED_COLUMNS): the whole row took the engine ~8 % of its CPU per claimed task to parse (five
 * timestamps into Dates, columns nobody reads; a profile of the bench's maxTasks-50 window). Mode 'all'
 * returns the whole row, for the checks a re-acquired lease needs.
 */
export function claimStatement(
  actor: Actor,
  input: FetchInput,
  projectId: string | null,
  mode: 'ready-only' | 'all',
) {
  const topics = input.topics.map((t) => t.topicName);
  const durations = input.topics.map((t) => t.lockDurationMs);
  const projectFilter = projectId === null ? sql`TRUE` : sql`project_id = ${projectId}`;
  // maxTasks (validated: an integer from 1 to 100) is written into the statement: a prepared statement
  // per value keeps a plan whose LIMIT is known (a generic plan with LIMIT $n may prefer a sort)
  const limitValue = Math.min(100, Math.max(1, Math.trunc(input.maxTasks)));
  const limit = sql.raw(String(limitValue));
  const expiredWhere = sql`state = 'LEASED' AND lease_expires_at <= now() AND topic_name = ANY(${sql.param(topics)}::text[]) AND ${projectFilter}`;
  const readyOnly = mode === 'ready-only';
  return sql`WITH ${
    readyOnly
      ? sql`probe AS (SELECT EXISTS (SELECT 1 FROM external_tasks WHERE ${expiredWhere}) AS any_expired)`
      : sql`expired AS (
        SELECT id FROM external_tasks WHERE ${expiredWhere}
        ORDER BY lease_expires_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )`
  }, ready AS (
        SELECT c.id, c.priority, c.available_at
        FROM unnest(${sql.param(topics)}::text[]) AS tp(name)
        CROSS JOIN LATERAL (
          SELECT id, priority, available_at FROM external_tasks
          WHERE state = 'OPEN' AND topic_name = tp.name AND available_at <= now() AND ${projectFilter}
            ${readyOnly ? sql`AND NOT (SELECT any_expired FROM probe)` : sql``}
          ORDER BY priority DESC NULLS LAST, available_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ) c
      ), picked AS (
        ${readyOnly ? sql`` : sql`SELECT id, true AS was_expired FROM expired UNION ALL`}
        SELECT id, false AS was_expired FROM (SELECT id FROM ready ORDER BY priority DESC NULLS LAST, available_at LIMIT ${limit}) r
        LIMIT ${limit}
      ), leased AS (
        UPDATE external_tasks t
        SET state = 'LEASED', worker_id = ${input.workerId}, leased_by = ${actor.principalId},
            lease_request_id = ${input.requestId ?? null}::text,
            lease_expires_at = now() + make_interval(secs => (
              SELECT d FROM unnest(${sql.param(topics)}::text[], ${sql.param(durations)}::int[]) AS u(tn, d) WHERE u.tn = t.topic_name LIMIT 1
            ) / 1000.0),
            lease_expiries = t.lease_expiries + CASE WHEN p.was_expired THEN 1 ELSE 0 END,
            leased_at = now(), updated_at = now()
        FROM picked p, process_instances i
        WHERE t.id = p.id AND i.id = t.process_instance_id
        RETURNING ${readyOnly ? CLAIMED_COLUMNS : TASK_COLUMNS},
                  p.was_expired, i.variables AS instance_variables, i.traceparent AS instance_traceparent,
                  (SELECT jsonb_agg(to_jsonb(s) ORDER BY s.sequence) FROM steps s
                    WHERE s.task_id = t.id AND s.attempt = t.attempt) AS current_steps
      ), ${sql.raw(
        leasedHistory(
          limitValue,
          // TASK_LEASED in the same statement; a re-acquired lease is checked first (below)
          `SELECT l."projectId" AS project_id, l."processInstanceId" AS process_instance_id,
                  'TASK_LEASED'::text AS event_type, 'worker:' || l."workerId" AS actor, l.id AS task_id, l.attempt,
                  NULL::int AS sequence, NULL::uuid AS approval_id, NULL::uuid AS incident_id,
                  jsonb_build_object('workerId', l."workerId",
                    'leaseExpiresAt', to_char(l."leaseExpiresAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS data,
                  l.id AS ord
             FROM leased l WHERE NOT l.was_expired`,
        ),
      )}
      ${
        // one row even when nothing was leased: whether an expired lease made the statement stand back
        readyOnly
          ? sql`SELECT l.*, p.any_expired FROM probe p LEFT JOIN leased l ON true`
          : sql`SELECT * FROM leased`
      }`;
}

/**
 * The CTE `leased_history` appending a claim's TASK_LEASED rows (`source`). The set-based form (one UPDATE
 * of the chain heads for the claim, rows inserted already chained) saves ~0.006 ms of PostgreSQL CPU per
 * row but costs a fixed ~0.07 ms per statement (a window, two more CTEs, a join); measured on the bench:
 * −11 % per task at maxTasks 50, +15 % at maxTasks 1. The crossover is ~12 rows, so claims that may take
 * SET_APPEND_FROM or more use it and smaller ones the per-row trigger.
 */
const SET_APPEND_FROM = 10;
function leasedHistory(maxTasks: number, source: string): string {
  return maxTasks >= SET_APPEND_FROM
    ? historyChainedCtes('leased_history', source)
    : `leased_history AS (${historyInsert(source)} RETURNING 1)`;
}
