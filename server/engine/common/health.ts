/** What /healthz asks the engine: can it reach its database? */
import { sql } from 'drizzle-orm';
import type { Executor } from './context.js';

/** Resolves when the database answers a trivial statement; rejects when it cannot be reached. */
export async function ping(ex: Executor): Promise<void> {
  await ex.execute(sql`SELECT 1`);
}
