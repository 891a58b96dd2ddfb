/** Typed rows from a statement written with drizzle's `sql` tag (values as parameters). */
import type { SQL } from 'drizzle-orm';
import type { Executor } from './context.js';

/** Runs a statement and returns its rows (typed by the caller). */
export async function query<T = Record<string, unknown>>(ex: Executor, q: SQL): Promise<T[]> {
  const res = await ex.execute(q);
  return res.rows as T[];
}
