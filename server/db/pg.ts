/**
 * The one way to PostgreSQL: drizzle's builder (and its `sql` tag, parameters only) for ordinary
 * queries; named statements (`statement`, run with `execute`, parsed and planned once per connection)
 * for the hand-written hot paths. Both run through a `Db` bound to a pool or a transaction's connection
 * (`connectionOf`), so no code reaches into drizzle for it.
 *
 * The connections pipeline (pg's `pipeline: true`): `transaction` sends BEGIN with its body's first
 * statement, and a statement and COMMIT issued before either is awaited share a round trip
 * (`pipelined`). A failed statement aborts the transaction, so what follows fails too and COMMIT rolls
 * back: the first error is the one a caller awaits.
 */
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type * as schema from './schema.js';

export type Db = NodePgDatabase<typeof schema>;

/** Where statements run: the pool (each on any free connection), or one connection. */
export type Connection = pg.Pool | pg.PoolClient;

const connections = new WeakMap<object, Connection>();

/**
 * drizzle over a connection, remembered with it. The transaction's needs no schema mapping (the
 * relational query API is not used; mapping it cost ~0.1 ms per transaction).
 */
export function bindDb(conn: Connection, schemaOf?: typeof schema): Db {
  const db = (schemaOf ? drizzle(conn, { schema: schemaOf }) : drizzle(conn)) as Db;
  connections.set(db, conn);
  return db;
}

/** The connection a `Db` runs on (the pool, or its transaction's connection). */
export function connectionOf(db: Db): Connection {
  const conn = connections.get(db);
  if (!conn) throw new Error('connectionOf: this Db was not made by bindDb');
  return conn;
}

/** A named statement: its text has `$n` placeholders; its rows are typed by the caller. */
export interface Statement<Row> {
  readonly name: string;
  readonly text: string;
  /** phantom: the row type */
  readonly row?: Row;
}

const names = new Set<string>();

/** Declares a named statement (each name once: two texts under one name would collide per connection). */
export function statement<Row = Record<string, unknown>>(name: string, text: string): Statement<Row> {
  if (names.has(name)) throw new Error(`statement ${name} is declared twice`);
  names.add(name);
  return { name: `abada_${name}`, text };
}

/** Runs a named statement with its values as parameters; its rows. */
export async function execute<Row>(db: Db, s: Statement<Row>, values: readonly unknown[]): Promise<Row[]> {
  const res = await connectionOf(db).query({ name: s.name, text: s.text, values: values as unknown[] });
  return res.rows as Row[];
}

/**
 * Sends every query before awaiting any (one round trip on a pipelined connection): their results in
 * order, or the first error; every promise is awaited, so none rejects unhandled.
 */
export async function pipelined<T extends readonly unknown[]>(
  ...queries: { [K in keyof T]: Promise<T[K]> }
): Promise<T> {
  const settled = await Promise.allSettled(queries);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * A transaction on a connection of its own: BEGIN travels with the body's first statement; COMMIT at
 * the end, ROLLBACK on a throw (a connection whose ROLLBACK failed is discarded, not pooled).
 */
export async function transaction<T>(db: Db, body: (tx: Db) => Promise<T>): Promise<T> {
  const pool = connectionOf(db);
  if (!(pool instanceof pg.Pool)) throw new Error('transaction: already in one; use savepoint');
  const client = await pool.connect();
  let broken: Error | undefined;
  const begun = client.query('BEGIN');
  // Handled at once: the body may await something else before its first statement, and a BEGIN that
  // fails meanwhile (the server gone) would be an unhandled rejection by then. Its error is not lost:
  // the body's statements fail on the same connection, and COMMIT awaits `begun` below.
  begun.catch(() => {});
  try {
    const out = await body(bindDb(client));
    await pipelined(begun, client.query('COMMIT'));
    return out;
  } catch (e) {
    // the body's error is the answer; a failed BEGIN made the body fail too
    await begun.catch(() => {});
    await client.query('ROLLBACK').catch((err: Error) => {
      broken = err;
    });
    throw e;
  } finally {
    client.release(broken);
  }
}

let savepoints = 0;

/** A savepoint inside a transaction: its work is undone on a throw, the transaction goes on. */
export async function savepoint<T>(tx: Db, body: (sp: Db) => Promise<T>): Promise<T> {
  const conn = connectionOf(tx);
  const name = `abada_sp_${++savepoints}`;
  await conn.query(`SAVEPOINT ${name}`);
  try {
    const out = await body(tx);
    await conn.query(`RELEASE SAVEPOINT ${name}`);
    return out;
  } catch (e) {
    await conn.query(`ROLLBACK TO SAVEPOINT ${name}`);
    throw e;
  }
}
