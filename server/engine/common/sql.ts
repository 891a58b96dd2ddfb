import type { SQL } from 'drizzle-orm';
import type { Executor } from './context.js';

/** The rows of a statement written with drizzle's `sql` tag (values as parameters), typed by the caller. */
export async function query<T = Record<string, unknown>>(ex: Executor, q: SQL): Promise<T[]> {
  const res = await ex.execute(q);
  return res.rows as T[];
}
