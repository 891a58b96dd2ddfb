/** The raw baselines: the same kind of work with `pg` straight on the database. */
import type pg from 'pg';
import { MS, measuredRate, results, row, SMOKE } from './context.js';

/** Raw: a single-row UPDATE … RETURNING per transaction, one row per client (no row contention). */
export async function rawBaselines(pool: pg.Pool) {
  await pool.query('CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0)');
  await pool.query('INSERT INTO bench_counter (id) SELECT g FROM generate_series(0, 63) g');
  const raw: Record<number, number> = {};
  for (const c of [1, 4, 16]) {
    raw[c] = await rawUpdateRate(pool, c);
    row(`raw: single-row UPDATE … RETURNING, ${c} client(s)`, raw[c], raw[c], 'tx/s', 'the baseline itself');
  }
  results.rawUpdateTps = raw;
  // The raw claim: the same statement shape as fetch-and-lock, on a table with a partial index.
  await pool.query(`CREATE TABLE bench_jobs (id bigserial PRIMARY KEY, topic text NOT NULL, state text NOT NULL, priority int NOT NULL DEFAULT 0,
    available_at timestamptz NOT NULL DEFAULT now(), locked_until timestamptz) WITH (fillfactor = 70)`);
  await pool.query(
    `CREATE INDEX bench_jobs_open ON bench_jobs (topic, priority DESC, available_at) WHERE state = 'OPEN'`,
  );
  await pool.query(
    `INSERT INTO bench_jobs (topic, state) SELECT 'claim', 'OPEN' FROM generate_series(1, ${SMOKE ? 20_000 : 300_000})`,
  );
  await pool.query('VACUUM ANALYZE bench_jobs');
  results.rawClaimPerSec = await rawClaimRate(pool);
  const rawClaim = results.rawClaimPerSec as number;
  row('raw: claim statement (LIMIT 1), 4 clients', rawClaim, rawClaim, 'claims/s', 'the baseline itself');
}

/*
 * The baselines again, right before the figure they divide: this shared machine's speed drifts within a
 * run (neighbours), and a baseline taken minutes earlier at another speed once made a run's ratios 1.5–2×
 * too kind (raw commits at 16 clients 4,408/s at the start of a run, ~10,000/s a minute later). Each
 * ratio's baseline is measured in the seconds before its figure; the start-of-run table stays as it was.
 */

/** Raw single-row UPDATE … RETURNING transactions per second with `clients` clients. */
export function rawUpdateRate(pool: pg.Pool, clients: number): Promise<number> {
  return measuredRate(clients, MS, (client) =>
    pool.query({
      name: 'raw-update',
      text: 'UPDATE bench_counter SET n = n + 1 WHERE id = $1 RETURNING n',
      values: [client],
    }),
  );
}

const RAW_CLAIM = `WITH c AS (SELECT id FROM bench_jobs WHERE state = 'OPEN' AND topic = 'claim' AND available_at <= now()
      ORDER BY priority DESC, available_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    UPDATE bench_jobs j SET state = 'LEASED', locked_until = now() + interval '1 minute' FROM c WHERE j.id = c.id RETURNING j.id`;

/** Raw claims per second, 4 clients: the claim statement's shape on a plain table with a partial index. */
export function rawClaimRate(pool: pg.Pool): Promise<number> {
  return measuredRate(4, MS, () => pool.query({ name: 'raw-claim', text: RAW_CLAIM }));
}
