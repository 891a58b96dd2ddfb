/**
 * The claim of fetch-and-lock: which tasks a fetch leases, their TASK_LEASED audit rows, and what the
 * worker gets back, in one statement. $1 the topics, $2 their lease lengths (ms, in the same order),
 * $3 the caller's project (null: any, a global worker), $4 maxTasks, $5 the worker id, $6 its
 * principal, $7 the fetch's request id.
 *
 * Two candidate sets, each read through its own partial index and locked FOR UPDATE SKIP LOCKED (so
 * concurrent fetchers neither wait nor take the same row): expired leases, re-acquired on the SAME
 * attempt and first because someone already started them; then ready work by priority and age. Ready
 * work is read per topic (LATERAL), ordered exactly as the index (`priority DESC NULLS LAST,
 * available_at`): with `topic_name = ANY(…)` or NULLS FIRST, PostgreSQL sorted every open row of the
 * topic per fetch (600 ms at 1M open tasks; 0.1 ms so). Unpicked rows locked per topic are skipped by
 * other fetchers only until this one commits. Finished rows are in neither index.
 *
 * CLAIM_READY, tried first in its own implicit transaction, leases ready work only when no lease on
 * the topics has expired, else answers one row with nothing leased: re-acquiring an expired lease
 * needs checks in the same transaction, so the fetch then runs CLAIM_ALL in one. CLAIM_READY returns
 * only the columns the worker's view and TASK_LEASED need: parsing whole rows cost ~8 % of the
 * engine's CPU per claimed task.
 */
import { statement } from '../pg.js';
import { historyInsert } from '../rows.js';
import { type ExternalTaskRow, externalTasks } from '../schema.js';
import { columnsAs, TASK_COLUMNS } from './tasks.js';

/** The columns of a claimed task that the worker's view and the TASK_LEASED row need (CLAIM_READY). */
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

export type ClaimedColumns = Pick<ExternalTaskRow, (typeof CLAIMED_KEYS)[number]>;

/** What a claim answers beside the task's columns. */
export interface Claimed {
  was_expired: boolean;
  instance_variables: Record<string, unknown>;
  instance_traceparent: string | null;
  current_steps: Record<string, unknown>[] | null;
}

const PROJECT = '($3::text IS NULL OR project_id = $3::text)';
const EXPIRED_WHERE = `state = 'LEASED' AND lease_expires_at <= now() AND topic_name = ANY($1::text[]) AND ${PROJECT}`;

const TASK_LEASED = `SELECT l."projectId" AS project_id, l."processInstanceId" AS process_instance_id,
       'TASK_LEASED'::text AS event_type, 'worker:' || l."workerId" AS actor, l.id AS task_id, l.attempt,
       NULL::int AS sequence, NULL::uuid AS approval_id, NULL::uuid AS incident_id,
       jsonb_build_object('workerId', l."workerId",
         'leaseExpiresAt', to_char(l."leaseExpiresAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS data,
       NULL::jsonb AS events, l.id AS ord
  FROM leased l WHERE NOT l.was_expired`;

function claimText(readyOnly: boolean): string {
  return `WITH ${
    readyOnly
      ? `probe AS (SELECT EXISTS (SELECT 1 FROM external_tasks WHERE ${EXPIRED_WHERE}) AS any_expired)`
      : `expired AS (
        SELECT id FROM external_tasks WHERE ${EXPIRED_WHERE}
        ORDER BY lease_expires_at LIMIT $4 FOR UPDATE SKIP LOCKED)`
  }, ready AS (
        SELECT c.id, c.priority, c.available_at
        FROM unnest($1::text[]) AS tp(name)
        CROSS JOIN LATERAL (
          SELECT id, priority, available_at FROM external_tasks
          WHERE state = 'OPEN' AND topic_name = tp.name AND available_at <= now() AND ${PROJECT}
            ${readyOnly ? 'AND NOT (SELECT any_expired FROM probe)' : ''}
          ORDER BY priority DESC NULLS LAST, available_at
          LIMIT $4 FOR UPDATE SKIP LOCKED
        ) c
      ), picked AS (
        ${readyOnly ? '' : 'SELECT id FROM expired UNION ALL'}
        SELECT id FROM (SELECT id FROM ready ORDER BY priority DESC NULLS LAST, available_at LIMIT $4) r
        LIMIT $4
      ), leased AS (
        UPDATE external_tasks t
        SET state = 'LEASED', worker_id = $5::text, leased_by = $6::uuid, lease_request_id = $7::text,
            lease_expires_at = now() + make_interval(secs => (
              SELECT d FROM unnest($1::text[], $2::int[]) AS u(tn, d) WHERE u.tn = t.topic_name LIMIT 1
            ) / 1000.0),
            lease_expiries = t.lease_expiries + ${readyOnly ? '0' : 'CASE WHEN t.id = ANY(ARRAY(SELECT id FROM expired)) THEN 1 ELSE 0 END'},
            leased_at = now(), updated_at = now()
        -- by primary key: with maxTasks a parameter, the generic plan cannot know how few rows are
        -- picked, and joined them to a seq scan of every task (80 ms at 200k open tasks)
        WHERE t.id = ANY(ARRAY(SELECT id FROM picked))
        RETURNING ${readyOnly ? columnsAs('t', externalTasks, CLAIMED_KEYS) : TASK_COLUMNS},
                  ${readyOnly ? 'false' : 't.id = ANY(ARRAY(SELECT id FROM expired))'} AS was_expired,
                  (SELECT i.variables FROM process_instances i WHERE i.id = t.process_instance_id) AS instance_variables,
                  (SELECT i.traceparent FROM process_instances i WHERE i.id = t.process_instance_id) AS instance_traceparent,
                  (SELECT jsonb_agg(to_jsonb(s) ORDER BY s.sequence) FROM steps s
                    WHERE s.task_id = t.id AND s.attempt = t.attempt) AS current_steps
      ), leased_history AS (${historyInsert(TASK_LEASED)} RETURNING 1)
      ${
        // one row even when nothing was leased: whether an expired lease made the statement stand back
        readyOnly
          ? 'SELECT l.*, p.any_expired FROM probe p LEFT JOIN leased l ON true'
          : 'SELECT * FROM leased'
      }`;
}

export const CLAIM_READY = statement<ClaimedColumns & Claimed & { any_expired: boolean }>(
  'claim_ready',
  claimText(true),
);

export const CLAIM_ALL = statement<ExternalTaskRow & Claimed>('claim_all', claimText(false));

/**
 * $1 request id, $2 worker id, $3 principal: the live leases a worker took with this request id (a
 * fetch re-sent because its answer was lost gets its claim back). Among LEASED rows (a partial index)
 * of one worker: a handful of rows at most.
 */
export const CLAIMED_BEFORE = statement<ExternalTaskRow & Claimed>(
  'claim_before',
  `SELECT ${TASK_COLUMNS}, false AS was_expired, i.variables AS instance_variables,
          i.traceparent AS instance_traceparent,
          (SELECT jsonb_agg(to_jsonb(s) ORDER BY s.sequence) FROM steps s
            WHERE s.task_id = t.id AND s.attempt = t.attempt) AS current_steps
     FROM external_tasks t JOIN process_instances i ON i.id = t.process_instance_id
    WHERE t.state = 'LEASED' AND t.lease_request_id = $1 AND t.worker_id = $2
      AND t.leased_by = $3 AND t.lease_expires_at > now()
    ORDER BY t.lease_expires_at`,
);
