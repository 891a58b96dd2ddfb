/**
 * The one database driver, `pg`: a pool on the server DATABASE_URL names, or on the embedded PostgreSQL
 * that embedded.ts starts when it is unset.
 */
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { bindDb, type Db } from './pg.js';
import * as schema from './schema.js';

// BIGINT counts come back as strings by default; ours fit in a double.
pg.types.setTypeParser(20, (v) => Number(v));

export type { Db };

// bench/ and soak/ start their embedded servers through this module.
export { type EmbeddedServer, freePort, startEmbeddedPostgres } from './embedded.js';

export interface Database {
  url: string;
  pool: pg.Pool;
  db: Db;
  close(): Promise<void>;
}

/** How long closing waits for connections still in use before it ends them (a shutdown has a deadline). */
const CLOSE_DEADLINE_MS = 5_000;

/**
 * Ends the pool. `pool.end()` waits for every checked-out connection to come back; one whose holder never
 * gives it back (a request still waiting on a database that restarted under it) would hold the shutdown
 * forever. After `deadlineMs` the connections still open are ended: their queries fail, their holders
 * release them, and the pool ends.
 */
async function endWithin(pool: pg.Pool, clients: Set<pg.Client>, deadlineMs: number): Promise<void> {
  const ended = pool.end();
  if ((await settlesWithin(ended, deadlineMs)) === 'late') {
    for (const client of clients) void client.end().catch(() => {});
    await settlesWithin(ended, deadlineMs);
  }
}

/** Waits for `p` for at most `ms` (its timer cleared either way, so it never holds the process open). */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<'settled' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    return await Promise.race([p.then(() => 'settled' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function connect(url: string, opts: { max?: number } = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
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
  // Nor a dropped connection that is checked out (a transaction open when PostgreSQL restarts or is
  // killed): pg emits 'error' on the client as well as failing its query, and with no listener that was
  // an uncaught exception — the engine process died with its database. The query's own error reaches
  // the caller (UNAVAILABLE); release() then discards the broken client.
  // Every connection is also tracked, so that close() can end the ones still in use at its deadline.
  const clients = new Set<pg.Client>();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    clients.add(client);
  });
  pool.on('remove', (client) => clients.delete(client));
  const db = bindDb(pool, schema);
  return {
    url,
    pool,
    db,
    close: () => endWithin(pool, clients, CLOSE_DEADLINE_MS),
  };
}

/** Whether the database answers (for /healthz). */
export async function ping(db: Db): Promise<void> {
  await db.execute(sql`SELECT 1`);
}
