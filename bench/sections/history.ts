/**
 * How cost grows with history (opt-in: `npm run bench -- --history`): CPU per journal step and per
 * claimed task on a near-empty database, then again after 1M finished instances (each with a completed
 * task and 10 hash-chained history rows: 10M rows) were generated with set-based SQL, and the time of
 * `verifyAudit` of one old instance. BENCH_HISTORY_INSTANCES sets the number of instances.
 */
import type pg from 'pg';
import { seedOpenTasks } from '../seed.js';
import {
  type Client,
  FETCH,
  fetchTasks,
  JOURNAL,
  MS,
  measuredRate,
  results,
  row,
  rows,
  SECONDS,
  SMOKE,
  startMany,
} from './context.js';

const INSTANCES = SMOKE ? 2_000 : Number(process.env.BENCH_HISTORY_INSTANCES ?? 1_000_000);
const ROWS_PER_INSTANCE = 10;

export async function historyGrowth(pool: pg.Pool, admin: Client, worker: Client) {
  // both measurements start from the same state: a fresh pool of open tasks to claim, statistics fresh
  // and a checkpoint just taken (after a checkpoint, the first change to each page writes the whole page
  // to the WAL; measuring only the second phase right after one had put that cost on the history's account)
  await claimPool(pool);
  await settle(pool);
  const empty = await costs(pool, admin, worker, 'empty database');
  const t0 = performance.now();
  await generateHistory(pool, INSTANCES);
  const generatedSeconds = (performance.now() - t0) / 1000;
  await claimPool(pool);
  await settle(pool);
  const full = await costs(pool, admin, worker, `${INSTANCES} finished instances`);
  const verify = await verifyTimes(pool, admin);
  const { rows: size } = await pool.query(
    `SELECT pg_total_relation_size('history') AS bytes, (SELECT count(*) FROM history) AS n`,
  );
  results.history = {
    instances: INSTANCES,
    historyRows: Number(size[0].n),
    historyBytes: Number(size[0].bytes),
    generatedSeconds,
    journalStepCpuRatio: full.journal / empty.journal,
    claimCpuRatio: full.claim / empty.claim,
    verifyAuditMs: verify,
    empty,
    full,
  };
}

/**
 * The open tasks a phase claims, made just before it: what is left of the last phase's pool is
 * cancelled, so each phase claims tasks of instances made right before it, as a live engine claims
 * recent work. (Until 2026-12-01 both phases shared one pool of 100k: the first phase claimed ~60k and
 * the second ran out of work within its window, so its empty fetches were counted as growth.)
 */
// a phase claims ~20–25k tasks a second on 2 cores; twice that per second of measurement
const CLAIM_POOL = Math.max(SMOKE ? 20_000 : 200_000, SECONDS * 50_000);
async function claimPool(pool: pg.Pool) {
  await pool.query(`UPDATE external_tasks SET state = 'CANCELLED', ended_at = now()
    WHERE topic_name = 'claim' AND state = 'OPEN'`);
  await seedOpenTasks(pool, 'claim', CLAIM_POOL, { vacuum: false });
}

async function settle(pool: pg.Pool) {
  await pool.query('VACUUM ANALYZE history, history_heads, process_instances, external_tasks');
  await pool.query('CHECKPOINT');
}

/** Engine + PostgreSQL CPU ms per journalStep commit (16 clients) and per task claimed (maxTasks 50). */
async function costs(pool: pg.Pool, admin: Client, worker: Client, label: string) {
  await startMany(admin, 'bench', 16);
  const tasks = await fetchTasks(worker, 'history-bench', 16);
  const seq = tasks.map(() => 0);
  const commits = await measuredRate(16, MS, async (client) => {
    const t = tasks[client];
    const base = {
      taskId: t.id,
      workerId: 'history-bench',
      attempt: t.attempt,
      sequence: ++seq[client],
      kind: 'MODEL_CALL',
      model: 'gpt-4.1-mini',
      request: { model: 'gpt-4.1-mini', messagesHash: `h${seq[client]}` },
    };
    await worker(JOURNAL, { i: { ...base, state: 'STARTED' } });
    await worker(JOURNAL, {
      i: { ...base, state: 'COMPLETED', response: { role: 'assistant', content: 'ok' } },
    });
  });
  row(`history: journalStep commits/s, 16 clients, ${label}`, commits * 2, commits * 2, 'commits/s');
  const journal = cpuTotal();
  let claimed = 0;
  const t0 = performance.now();
  await measuredRate(4, MS, async (client) => {
    const got = await worker(FETCH, {
      i: {
        workerId: `history-claim-${client}`,
        maxTasks: 50,
        topics: [{ topicName: 'claim', lockDurationMs: 3_600_000 }],
      },
    });
    claimed += got.fetchAndLock.length;
  });
  const perSec = claimed / ((performance.now() - t0) / 1000);
  const { rows: left } = await pool.query(
    `SELECT count(*)::int AS n FROM external_tasks WHERE topic_name = 'claim' AND state = 'OPEN'`,
  );
  // a pool that ran dry would count empty fetches as the cost of claiming
  if (left[0].n === 0) throw new Error(`history: the claim pool (${CLAIM_POOL}) ran out; make it larger`);
  row(`history: fetchAndLock maxTasks 50, tasks claimed/s, ${label}`, perSec, perSec, 'tasks/s');
  return { journal, claim: cpuTotal() };
}

const cpuTotal = () => {
  const c = rows[rows.length - 1].cpuPerUnit;
  return c ? c.engines + c.postgres : Number.NaN;
};

/**
 * Finished instances with a completed task and a valid hash chain of ROWS_PER_INSTANCE rows each, in
 * set-based passes (one INSERT per chain position, the previous position's hashes in a work table): the
 * per-row chain trigger would take an hour for 10M rows. The rows are what the trigger would have
 * written (same canonical function), so verifyAudit checks them as any other.
 */
async function generateHistory(pool: pg.Pool, n: number) {
  const { rows: d } = await pool.query(`SELECT id FROM definitions WHERE key = 'claim' LIMIT 1`);
  const c = await pool.connect();
  try {
    await c.query('ALTER TABLE history DISABLE TRIGGER history_chain');
    await c.query(
      `CREATE UNLOGGED TABLE bench_chain AS
      WITH inst AS (
        INSERT INTO process_instances (project_id, definition_id, key, version, state, current_node_id, variables, ended_at)
        SELECT 'default', $1, 'claim', 1, 'COMPLETED', 'done', '{}'::jsonb, now() - interval '30 days'
        FROM generate_series(1, $2) RETURNING id),
      tasks AS (
        INSERT INTO external_tasks (project_id, process_instance_id, node_id, node_type, topic_name, state, max_attempts, ended_at)
        SELECT 'default', id, 'work', 'service', 'claim', 'COMPLETED', 3, now() - interval '30 days' FROM inst)
      SELECT id AS instance, ''::text AS hash FROM inst`,
      [d[0].id, n],
    );
    for (let k = 1; k <= ROWS_PER_INSTANCE; k++) {
      const event = `CASE ${k} WHEN 1 THEN 'INSTANCE_STARTED' WHEN ${ROWS_PER_INSTANCE} THEN 'INSTANCE_COMPLETED' ELSE 'STEP_JOURNALED' END`;
      // one history row per instance at chain position k, hashed by the trigger's own canonical function
      await c.query(`CREATE UNLOGGED TABLE bench_next AS
        SELECT (x.h).process_instance_id AS instance, (x.h).event_type, (x.h).at, (x.h).data, (x.h).prev_hash,
          encode(sha256(convert_to((x.h).prev_hash || abada_history_canonical_at(x.h, ${k}), 'UTF8')), 'hex') AS next_hash
        FROM (SELECT jsonb_populate_record(NULL::history, jsonb_build_object(
            'id', 0, 'project_id', 'default', 'process_instance_id', b.instance, 'seq', ${k},
            'event_type', ${event}, 'actor', 'engine', 'at', now() - interval '30 days' + ${k} * interval '1 second',
            'data', jsonb_build_object('n', ${k}), 'prev_hash', b.hash, 'hash', '')) AS h
          FROM bench_chain b OFFSET 0) x`);
      await c.query(`INSERT INTO history (project_id, process_instance_id, seq, event_type, actor, at, data, prev_hash, hash)
        SELECT 'default', instance, ${k}, event_type, 'engine', at, data, prev_hash, next_hash FROM bench_next`);
      await c.query('DROP TABLE bench_chain');
      await c.query(
        'CREATE UNLOGGED TABLE bench_chain AS SELECT instance, next_hash AS hash FROM bench_next',
      );
      await c.query('DROP TABLE bench_next');
    }
    await c.query(`INSERT INTO history_heads (process_instance_id, seq, prev_hash, hash)
      SELECT b.instance, ${ROWS_PER_INSTANCE}, h.prev_hash, b.hash FROM bench_chain b
      JOIN history h ON h.process_instance_id = b.instance AND h.seq = ${ROWS_PER_INSTANCE}`);
    await c.query('DROP TABLE bench_chain');
  } finally {
    await c.query('ALTER TABLE history ENABLE TRIGGER history_chain');
    c.release();
  }
}

/** verifyAudit of old instances through GraphQL: the median and the slowest of 20, in ms. */
async function verifyTimes(pool: pg.Pool, admin: Client) {
  const { rows: picked } = await pool.query(
    `SELECT process_instance_id AS id FROM history_heads WHERE seq = ${ROWS_PER_INSTANCE} ORDER BY random() LIMIT 20`,
  );
  const times: number[] = [];
  for (const p of picked) {
    const t0 = performance.now();
    const v = await admin(`query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows reason } }`, {
      id: p.id,
    });
    times.push(performance.now() - t0);
    if (!v.verifyAudit.valid) throw new Error(`generated chain invalid: ${v.verifyAudit.reason}`);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], max: times[times.length - 1], n: times.length };
}
