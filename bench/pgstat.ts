/**
 * What a measured window did in one database, by PostgreSQL's own counters: commits
 * (`pg_stat_database.xact_commit`), rows inserted (`n_tup_ins` over `pg_stat_user_tables`, checked
 * against a direct count), and WAL bytes (`pg_current_wal_lsn()`, server-wide).
 *
 * The counters are per database and flushed lazily: a backend adds its counts to the shared ones at most
 * once a second, and one that goes idle within that second waits 10 s (PGSTAT_IDLE_INTERVAL) before it
 * does. So every connection that worked in a window is made to flush at both ends (`flushStats`: one
 * `pg_stat_force_next_flush()` each, itself a commit the window subtracts), and the observer flushes its
 * own before each reading.
 */
import pg from 'pg';

/**
 * Makes every idle connection of `pool` report its pending statistics now: each is checked out at once
 * and runs `pg_stat_force_next_flush()`, whose transaction end flushes that backend's counts, its own
 * commit included. Returns how many commits that was. Only the idle ones: a library may hold one for
 * good (DBOS its LISTEN connection, which commits nothing after its start), and asking for every
 * connection would wait for it forever; the bench calls this when the work has stopped.
 */
export async function flushStats(pool: pg.Pool): Promise<number> {
  const n = pool.idleCount;
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  try {
    await Promise.all(clients.map((c) => c.query('SELECT pg_stat_force_next_flush()')));
  } finally {
    for (const c of clients) c.release();
  }
  return n;
}

interface Reading {
  commits: number;
  inserted: number;
  walLsn: bigint;
}

/** Per unit of work (task, start) over a window. */
export interface WindowCounts {
  commits: number;
  rows: number;
  /** rows per unit by a direct count of every user table before and after (NaN when not counted) */
  rowsCounted: number;
  walBytes: number;
}

/** A connection of its own to one database that reads the counters (and counts rows) between windows. */
export class DbCounters {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<DbCounters> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new DbCounters(client);
  }

  /**
   * Flushes this connection's own counts, then reads. Between two readings the observer adds exactly two
   * commits: the first reading's read and the second's flush (`window` subtracts them).
   */
  async read(): Promise<Reading> {
    await this.client.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await this.client.query<{ commits: string; inserted: string; lsn: string }>(
      `SELECT d.xact_commit AS commits, pg_current_wal_lsn()::text AS lsn,
         (SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables) AS inserted
       FROM pg_stat_database d WHERE d.datname = current_database()`,
    );
    const r = rows[0];
    return { commits: Number(r.commits), inserted: Number(r.inserted), walLsn: lsn(r.lsn) };
  }

  /** Rows in every user table of the database, counted (the check on `n_tup_ins`). */
  async countRows(): Promise<number> {
    const { rows: tables } = await this.client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables`,
    );
    let n = 0;
    for (const t of tables)
      n += Number((await this.client.query(`SELECT count(*)::bigint AS n FROM ${t.name}`)).rows[0].n);
    return n;
  }

  /**
   * What `run` did in this database, per unit: read (and rows counted) before and after it. `run` says
   * how many units of work it did and how many commits its closing flush added (`flushStats`).
   */
  async around<T>(
    run: () => Promise<{ result: T; units: number; flushed: number }>,
  ): Promise<{ result: T; counts: WindowCounts }> {
    const counted0 = await this.countRows();
    const before = await this.read();
    const { result, units, flushed } = await run();
    const after = await this.read();
    const counted = { before: counted0, after: await this.countRows() };
    return { result, counts: window(before, after, units, flushed, counted) };
  }

  close() {
    return this.client.end();
  }
}

/** `X/Y` (hex high and low 32 bits) as a byte position. */
function lsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/**
 * Per unit over a window between two readings: `flushed` is the commits the flushes at its end added
 * (`flushStats`), `counted` the direct row counts before and after, if taken.
 */
function window(
  before: Reading,
  after: Reading,
  units: number,
  flushed: number,
  counted?: { before: number; after: number },
): WindowCounts {
  const OBSERVER_COMMITS = 2;
  return {
    commits: (after.commits - before.commits - OBSERVER_COMMITS - flushed) / units,
    rows: (after.inserted - before.inserted) / units,
    rowsCounted: counted ? (counted.after - counted.before) / units : Number.NaN,
    walBytes: Number(after.walLsn - before.walLsn) / units,
  };
}
