/**
 * Raw SQL next to drizzle: the pg client under an executor, named prepared statements for the hot path,
 * and typed rows from a raw statement.
 */
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { connectionOf } from '../../db/pg.js';
import type { Executor } from './context.js';

/** The pg client under a drizzle executor: the transaction's connection, or the pool outside one. */
export function pgClientOf(ex: Executor): pg.ClientBase | pg.Pool {
  return connectionOf(ex);
}

const dialect = new PgDialect();
const statementNames = new Map<string, string>();

/**
 * The SQL text of a drizzle fragment without parameters, for statements written as text (SQL-level
 * `PREPARE`, whose parameters are `$n` placed with `sql.raw`).
 */
export function sqlText(q: SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(q);
  if (params.length > 0) throw new Error('sqlText: the fragment has parameters; place them with sql.raw');
  return text;
}

/**
 * `query` as a named prepared statement: PostgreSQL parses and plans it once per connection instead of
 * on every call. For the hot path only (the claim, the step-by-step journal's writes): each distinct
 * text gets its own name and stays prepared on every connection that ran it, so a statement's text may
 * vary only among a few forms (the claim: per maxTasks value and with or without a project filter).
 * Timestamps come back as Dates.
 */
export async function queryPrepared<T = Record<string, unknown>>(ex: Executor, q: SQL): Promise<T[]> {
  const { sql: text, params } = dialect.sqlToQuery(q);
  let name = statementNames.get(text);
  if (!name) {
    name = `abada_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  const res = await pgClientOf(ex).query({ name, text, values: params as unknown[] });
  return res.rows as T[];
}

/** Runs a raw statement and returns its rows (typed by the caller). */
export async function query<T = Record<string, unknown>>(ex: Executor, q: SQL): Promise<T[]> {
  const res = await ex.execute(q);
  return res.rows as T[];
}
