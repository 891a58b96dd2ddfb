/** What /healthz and /readyz ask the engine: can it reach its database, and is it listening for events? */
import { sql } from 'drizzle-orm';
import type { EngineContext, Executor } from './context.js';

/** Resolves when the database answers within `timeoutMs`: a blackholed database must not hang the check. */
export async function ping(ex: Executor, timeoutMs = 2000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([ex.execute(sql`SELECT 1`), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether a load balancer should send this process requests: the database answers, the LISTEN connection
 * is up (events and long polls depend on it), and the process is not shutting down.
 */
export async function readiness(ctx: EngineContext, draining: boolean) {
  const database = await ping(ctx.db).then(
    () => true,
    () => false,
  );
  const listening = (ctx.notifier as { listening?: boolean } | null)?.listening !== false;
  return { ready: database && listening && !draining, database, listening, draining };
}
