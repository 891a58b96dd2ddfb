/** The one database driver, `pg`: a pool on DATABASE_URL's server, or the embedded one's when it is unset. */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isUnavailable } from '../errors.js';
import { bindDb, type Db } from './pg.js';
import * as schema from './schema.js';

// BIGINT counts come back as strings by default; ours fit in a double.
pg.types.setTypeParser(20, (v) => Number(v));

export type { Db };

// bench/ and soak/ start their embedded servers through this module.
export { type EmbeddedServer, freePort, startEmbeddedPostgres } from './embedded.js';

/** How long closing waits for connections still in use before it ends them (a shutdown has a deadline). */
const CLOSE_DEADLINE_MS = 5_000;

/**
 * Ends the pool. `pool.end()` waits for every checked-out connection to come back; one whose holder never
 * gives it back (a request still waiting on a query that will not end) would hold the shutdown forever.
 * After `deadlineMs` the pool's own backends still open are terminated from a connection of their own
 * (found by the pool's application_name; a pipelined connection's end() would wait for its queries to
 * drain): their queries fail, their holders release them, and the pool ends.
 */
async function endWithin(pool: pg.Pool, url: string, name: string, deadlineMs: number): Promise<void> {
  const ended = pool.end();
  if ((await settlesWithin(ended, deadlineMs)) === 'settled') return;
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await admin.connect();
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [name],
    );
  } catch (e) {
    // the database cannot be reached: the connections still open die with it; close() returns anyway
    if (!isUnavailable(e)) throw e;
  } finally {
    await admin.end().catch(() => {});
  }
  await settlesWithin(ended, deadlineMs);
}

/** Waits for `p` for at most `ms` (on an unref'd timer, which never holds the process open). */
const settlesWithin = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => 'settled' as const), sleep(ms, 'late' as const, { ref: false })]);

export function connect(url: string, opts: { max?: number } = {}) {
  // this pool's own backends, apart from other engines' on the same database (endWithin)
  const name = `abada-${process.pid}-${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({
    connectionString: url,
    application_name: name,
    max: opts.max ?? 20,
    idleTimeoutMillis: 30_000,
    // Without it a request waits forever for a connection to a database that is gone (blackholed,
    // restarting): it fails after this instead, as UNAVAILABLE, and the caller re-sends it.
    connectionTimeoutMillis: 10_000,
    // Generic plans for the engine's few named prepared statements (the journal's load and write, the
    // claim): they look rows up by key and were re-planned on every call under the default, planning
    // costing more than running. Unnamed statements (drizzle's) are planned per call regardless.
    options: '-c plan_cache_mode=force_generic_plan',
    // a statement goes out without waiting for the one before it (BEGIN with a transaction's first
    // statement, a write with its COMMIT): server/db/pg.ts
    pipeline: true,
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor a dropped connection that is checked out: pg emits 'error' on the client as well as failing its
  // query, unhandled that would kill the engine with its database. The query's error reaches the caller
  // (UNAVAILABLE); release() then discards the broken client.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return { url, pool, db: bindDb(pool, schema), close: () => endWithin(pool, url, name, CLOSE_DEADLINE_MS) };
}
