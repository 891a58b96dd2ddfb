/**
 * Worker registration and health (SPEC §6). Fetch polls write heartbeats, debounced in memory and in SQL
 * (a row younger than the debounce is not rewritten), so a busy fleet does not write on every poll.
 */
import { and, eq, isNull, ne, or, sql } from 'drizzle-orm';
import { workers, type WorkerRow } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import type { Actor, EngineContext } from '../common/index.js';
import { openOrBumpIncident } from '../incidents/index.js';
import { transaction } from '../../db/pg.js';

export type WorkerView = WorkerRow & { health: 'ONLINE' | 'ERROR' | 'OFFLINE' };

function withHealth(w: WorkerRow, offlineAfterMs: number, now = Date.now()): WorkerView {
  const offline = !w.lastHeartbeatAt || now - w.lastHeartbeatAt.getTime() > offlineAfterMs;
  return { ...w, health: offline ? 'OFFLINE' : w.consecutiveFailures > 0 ? 'ERROR' : 'ONLINE' };
}

export async function registerWorker(
  ctx: EngineContext,
  actor: Actor,
  input: { workerId: string; topics: string[]; models?: string[] | null },
): Promise<WorkerView> {
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only a worker credential can register as a worker.');
  if (!input.workerId || input.workerId.length > 200) {
    throw invalid('workerId must be 1 to 200 characters.', 'workerId', 'length');
  }
  const missing = input.topics.filter((t) => !actor.topics.includes(t) && !actor.topics.includes('*'));
  if (missing.length) {
    await recordRejection(ctx, actor, input.workerId, {
      reason: 'registered without capability',
      topics: missing,
    });
    throw new EngineError(
      'FORBIDDEN',
      `This worker credential holds no capability for ${missing.join(', ')}.`,
    );
  }
  const [row] = await ctx.db
    .insert(workers)
    .values({
      principalId: actor.principalId,
      workerId: input.workerId,
      projectId: actor.projectId,
      topics: input.topics,
      models: input.models ?? [],
      lastHeartbeatAt: sql`now()`,
    })
    .onConflictDoUpdate({
      target: [workers.principalId, workers.workerId],
      set: { topics: input.topics, models: input.models ?? [], lastHeartbeatAt: sql`now()` },
    })
    .returning();
  lastBeat.set(`${actor.principalId}/${input.workerId}`, Date.now());
  return withHealth(row, ctx.config.workerOfflineAfterMs);
}

const lastBeat = new Map<string, number>();

export async function heartbeat(ctx: EngineContext, actor: Actor, workerId: string): Promise<void> {
  const k = `${actor.principalId}/${workerId}`;
  const now = Date.now();
  const prev = lastBeat.get(k);
  if (prev !== undefined && now - prev < ctx.config.heartbeatDebounceMs) return;
  lastBeat.set(k, now);
  if (lastBeat.size > 100_000) lastBeat.clear();
  const debounce = ctx.config.heartbeatDebounceMs / 1000;
  await ctx.db.execute(sql`
    INSERT INTO workers (principal_id, worker_id, project_id, topics, last_heartbeat_at)
    VALUES (${actor.principalId}, ${workerId}, ${actor.projectId}, ${sql.param(actor.topics)}::text[], now())
    ON CONFLICT (principal_id, worker_id) DO UPDATE SET last_heartbeat_at = now()
    WHERE workers.last_heartbeat_at IS NULL OR workers.last_heartbeat_at < now() - make_interval(secs => ${debounce})`);
}

/**
 * A rejected fetch leaves a durable trace: the worker's last rejection, and one OPEN FETCH_REJECTED
 * incident per principal, topic and reason, whose count a repeated rejection bumps.
 */
export async function recordRejection(
  ctx: EngineContext,
  actor: Actor,
  workerId: string,
  rejection: { reason: string; topics: string[] },
): Promise<void> {
  const reason = `${rejection.reason} for ${rejection.topics.join(', ')}`;
  await transaction(ctx.db, async (tx) => {
    await tx.execute(sql`
      INSERT INTO workers (principal_id, worker_id, project_id, topics, last_rejection_at, last_rejection_reason, consecutive_failures)
      VALUES (${actor.principalId}, ${workerId}, ${actor.projectId}, ${sql.param(actor.topics)}::text[], now(), ${reason}, 1)
      ON CONFLICT (principal_id, worker_id) DO UPDATE SET last_rejection_at = now(), last_rejection_reason = ${reason},
        consecutive_failures = workers.consecutive_failures + 1`);
    // sorted: two engines rejecting the same two topics lock the incidents' keys in one order
    for (const topic of [...new Set(rejection.topics)].sort()) {
      await openOrBumpIncident(tx, {
        projectId: actor.projectId,
        type: 'FETCH_REJECTED',
        message: `Worker ${workerId} (${actor.name}) was refused: ${rejection.reason} for ${topic}. Give the principal the topic or stop the worker asking for it.`,
        workerId,
        dedupeKey: `FETCH_REJECTED:${actor.principalId}:${topic}:${rejection.reason}`,
      });
    }
  });
}

export async function recordOutcome(
  ctx: EngineContext,
  principalId: string,
  workerId: string,
  failed: boolean,
) {
  // a success resets the count only when there is one to reset: no row written (nor locked) otherwise
  await ctx.db
    .update(workers)
    .set({ consecutiveFailures: failed ? sql`${workers.consecutiveFailures} + 1` : 0 })
    .where(
      and(
        eq(workers.principalId, principalId),
        eq(workers.workerId, workerId),
        failed ? undefined : ne(workers.consecutiveFailures, 0),
      ),
    );
}

export async function listWorkers(ctx: EngineContext, actor: Actor): Promise<WorkerView[]> {
  const rows = await ctx.db
    .select()
    .from(workers)
    .where(
      actor.projectId === null
        ? undefined
        : or(eq(workers.projectId, actor.projectId), isNull(workers.projectId)),
    )
    .orderBy(workers.workerId);
  const now = Date.now();
  return rows.map((w) => withHealth(w, ctx.config.workerOfflineAfterMs, now));
}
