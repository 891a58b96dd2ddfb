/**
 * The floor under the headline: the rows a 002-shaped task leaves in the database, written by hand with
 * `pg` on the same tables (the same indexes, foreign keys and history chain trigger), in the same seven
 * commits as the Agent Worker's task, 16 clients, each commit ONE prepared statement (one round trip):
 *  1. the lease: the claim statement's shape on `external_tasks` and its `TASK_LEASED` row;
 *  2.–6. five journal commits: the previous step's end (its row updated, `STEP_COMPLETED`) and the next
 *     step's start (its row inserted, `STEP_STARTED`) — model, read, model, keyed write, model;
 *  7. the completion: the last step's end, the task and the instance completed, the task's report, and
 *     their `TASK_COMPLETED` and `INSTANCE_COMPLETED` events.
 * Seven history rows (one per commit, carrying the thirteen events), ten step writes, three task and
 * instance updates, one report. No engine: what PostgreSQL does for the task's durable record whatever
 * writes it, and what the bench client's `pg` spends sending it. The headline (engine + PostgreSQL CPU per task) is printed against this floor's
 * PostgreSQL CPU per task, measured minutes apart in the same run (`rawTaskFloor` in the JSON).
 */
import type pg from 'pg';
import { historyInsert } from '../../server/db/rows.js';
import { printPgStats, resetPgStats } from './report.js';
import { MS, measuredRate, results, row, rows, startMany, type Client } from './context.js';

const WORKER = 'raw-floor';

/** A step's sealed request and response, about the size of the bench's (base64 of AES-GCM output). */
const SEALED = `v1.k1.${'A'.repeat(96)}`;
const DIGEST = 'f'.repeat(64);

/** The task's steps in order: kind, tool, policy, model. */
const STEPS = [
  ['MODEL_CALL', null, null, 'gpt-4.1-mini'],
  ['TOOL_CALL', 'crm/get_customer', 'read', null],
  ['MODEL_CALL', null, null, 'gpt-4.1-mini'],
  ['TOOL_CALL', 'crm/create_ticket', 'write', null],
  ['MODEL_CALL', null, null, 'gpt-4.1-mini'],
] as const;

/**
 * The history of one statement through the engine's own insert (`historyInsert`: the column list of
 * server/db/rows.ts, chained by the trigger): ONE row, its first event in the row's columns and the
 * others in `events`, as the engine writes a commit's events for one instance. `source` yields, per
 * event, `ord`, `event_type`, `actor`, `task_id`, `attempt`, `sequence` and `data`; $3 and $4 are the
 * project and the instance.
 */
const history = (source: string) =>
  historyInsert(`SELECT $3::text AS project_id, $4::uuid AS process_instance_id, x.event_type, x.actor,
      x.task_id, x.attempt, x.sequence, NULL::uuid AS approval_id, NULL::uuid AS incident_id, x.data, x.ord,
      (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('eventType', y.event_type, 'actor', y.actor,
                'taskId', y.task_id, 'attempt', y.attempt, 'sequence', y.sequence, 'data', y.data)) ORDER BY y.ord)
         FROM (${source}) y WHERE y.ord > x.ord) AS events
    FROM (${source}) x ORDER BY x.ord LIMIT 1`);

/** The lease; its history row's project and instance come from the leased task. */
const CLAIM = `WITH c AS (
    SELECT id FROM external_tasks WHERE state = 'OPEN' AND topic_name = 'abada:agent' AND available_at <= now()
    ORDER BY priority DESC NULLS LAST, available_at LIMIT 1 FOR UPDATE SKIP LOCKED
  ), l AS (
    UPDATE external_tasks t SET state = 'LEASED', worker_id = '${WORKER}', lease_expires_at = now() + interval '60 seconds',
           leased_at = now(), updated_at = now()
      FROM c WHERE t.id = c.id RETURNING t.id, t.project_id, t.process_instance_id, t.attempt, t.lease_expires_at
  ), h AS (
    ${historyInsert(`SELECT project_id, process_instance_id, 'TASK_LEASED' AS event_type, 'worker:${WORKER}' AS actor,
        id AS task_id, attempt, NULL::int AS sequence, NULL::uuid AS approval_id, NULL::uuid AS incident_id,
        jsonb_build_object('workerId', '${WORKER}', 'leaseExpiresAt', lease_expires_at) AS data,
        NULL::jsonb AS events, 1 AS ord FROM l`)}
  ) SELECT id, project_id, process_instance_id, attempt FROM l`;

/** $1 task, $2 attempt, $3 project, $4 instance, $5 the ended step's sequence (0: none), $6–$9 the new step. */
const JOURNAL = `WITH e AS (
    UPDATE steps SET state = 'COMPLETED', response_enc = '${SEALED}', updated_at = now()
     WHERE task_id = $1 AND attempt = $2 AND sequence = $5 RETURNING kind, tool_ref, model
  ), s AS (
    INSERT INTO steps (task_id, attempt, sequence, kind, state, tool_ref, policy, model, digest, request_enc, key_id)
    VALUES ($1, $2, $5 + 1, $6, 'STARTED', $7, $8, $9, '${DIGEST}', '${SEALED}', 'k1')
  ) ${history(`
      SELECT 1 AS ord, 'STEP_COMPLETED' AS event_type, 'worker:${WORKER}' AS actor, $1::uuid AS task_id,
             $2::int AS attempt, $5::int AS sequence,
             jsonb_build_object('kind', e.kind, 'toolRef', e.tool_ref, 'model', e.model, 'digest', '${DIGEST}') AS data FROM e
      UNION ALL
      SELECT 2, 'STEP_STARTED', 'worker:${WORKER}', $1, $2, $5 + 1,
             jsonb_build_object('kind', $6::text, 'toolRef', $7::text, 'model', $9::text, 'digest', '${DIGEST}')`)}`;

/** $1 task, $2 attempt, $3 project, $4 instance, $5 the last step's sequence. */
const COMPLETE = `WITH e AS (
    UPDATE steps SET state = 'COMPLETED', response_enc = '${SEALED}', updated_at = now()
     WHERE task_id = $1 AND attempt = $2 AND sequence = $5 RETURNING kind, model
  ), t AS (
    UPDATE external_tasks SET state = 'COMPLETED', metadata = '{}'::jsonb, lease_expires_at = NULL,
           updated_at = now(), ended_at = now() WHERE id = $1 RETURNING id
  ), i AS (
    UPDATE process_instances SET variables = variables || '{"out": "done"}'::jsonb, state = 'COMPLETED',
           current_node_id = 'done', updated_at = now(), ended_at = now() WHERE id = $4 RETURNING id
  ), r AS (
    INSERT INTO task_reports (task_id, attempt, operation, request_sha256, outcome)
    VALUES ($1, $2, 'complete', '${DIGEST}', '{"state": "COMPLETED"}')
  ) ${history(`
      SELECT 1 AS ord, 'STEP_COMPLETED' AS event_type, 'worker:${WORKER}' AS actor, $1::uuid AS task_id,
             $2::int AS attempt, $5::int AS sequence, jsonb_build_object('kind', e.kind, 'model', e.model, 'digest', '${DIGEST}') AS data FROM e
      UNION ALL SELECT 2, 'TASK_COMPLETED', 'worker:${WORKER}', $1, $2, NULL, '{}'::jsonb FROM t
      UNION ALL SELECT 3, 'INSTANCE_COMPLETED', 'engine', NULL, NULL, NULL, '{}'::jsonb FROM i`)}`;

/** One task's seven commits, each one prepared statement; false when no open task was left. */
async function oneTask(pool: pg.Pool): Promise<boolean> {
  const claimed = await pool.query({ name: 'floor-claim', text: CLAIM });
  const t = claimed.rows[0] as
    | { id: string; project_id: string; process_instance_id: string; attempt: number }
    | undefined;
  if (!t) return false;
  const base = [t.id, t.attempt, t.project_id, t.process_instance_id];
  for (const [i, [kind, tool, policy, model]] of STEPS.entries())
    await pool.query({
      name: 'floor-journal',
      text: JOURNAL,
      values: [...base, i, kind, tool, policy, model],
    });
  await pool.query({ name: 'floor-complete', text: COMPLETE, values: [...base, STEPS.length] });
  return true;
}

/**
 * Measures the floor (16 clients) on freshly started instances, and records PostgreSQL's and the
 * client's CPU per task (`rawTaskFloor`). A client that finds no open task left idles to the window's
 * end (rate(): only whole tasks count).
 */
export async function rawTaskFloor(pool: pg.Pool, admin: Client, starts: number): Promise<void> {
  await startMany(admin, 'bench', starts);
  const pgStats = await resetPgStats(pool);
  const tasks = await measuredRate(16, MS, () => oneTask(pool));
  if (pgStats) await printPgStats(pool, { title: 'the floor', units: tasks * (MS / 1000), unit: 'task' });
  row(
    'raw: the 002-shaped task’s rows by hand, 16 clients (×7 commits)',
    tasks * 7,
    tasks * 7,
    'commits/s',
    `${tasks.toFixed(1)} tasks/s; the floor under the headline`,
  );
  const cpu = rows[rows.length - 1].cpuPerUnit;
  if (cpu)
    results.rawTaskFloor = { postgres: cpu.postgres * 7, client: cpu.bench * 7, tasksPerSecond: tasks };
}
