/**
 * Reading the event stream (SPEC §13): cursors, replay pages, an object's latest position, the retention
 * sweep. Migration 0011's deferred trigger writes the positions (server/db/tables/stream.ts).
 */
import { sql } from 'drizzle-orm';
import { invalid } from '../../errors.js';
import {
  type EngineContext,
  type Executor,
  query,
  type StreamPayload,
  startBackgroundRunner,
} from '../common/index.js';

const CURSOR = /^v1\.(\d{1,15})$/;

/** The opaque cursor of a stream position. */
export const cursorOf = (position: number): string => `v1.${position}`;

/** The position a cursor names, or VALIDATION_FAILED when it is not one this engine hands out. */
export function positionOf(cursor: string): number {
  const m = CURSOR.exec(cursor);
  if (!m)
    throw invalid(
      `"${cursor}" is not an event cursor: pass the eventCursor of an Approval or Incident you received, or subscribe without after to start live.`,
      'after',
      'not an event cursor',
    );
  return Number(m[1]);
}

/** Which events a subscription replays: one type, and for approvals opened or not. */
export interface StreamFilter {
  type: StreamPayload['type'];
  /** true: only `opened`; false: every change but `opened`; null: all */
  opened: boolean | null;
  /** the subscriber's project; null = every project (a global principal) */
  projectId: string | null;
}

/**
 * Up to `limit` events after `after` that match `filter`, in position order, read in one snapshot
 * with the stream's bounds. A cursor ahead of the head (not issued here) or behind the oldest event
 * kept (pruned) is VALIDATION_FAILED: a replay from it could not be complete.
 */
export async function readStream(ctx: EngineContext, after: number, filter: StreamFilter, limit = 200) {
  const change =
    filter.opened === null ? sql`TRUE` : filter.opened ? sql`change = 'opened'` : sql`change <> 'opened'`;
  const rows = await query<{
    position: string | null;
    payload: StreamPayload | null;
    head: string;
    first: string | null;
  }>(
    ctx.db,
    sql`WITH bounds AS (
          SELECT (SELECT position FROM stream_head WHERE id = 1) AS head,
                 (SELECT min(position) FROM stream_events) AS first),
        page AS (
          SELECT position, payload FROM stream_events
           WHERE position > ${after} AND type = ${filter.type} AND ${change}
             AND (${filter.projectId}::text IS NULL OR project_id = ${filter.projectId})
           ORDER BY position LIMIT ${limit})
        SELECT p.position, p.payload, b.head, b.first FROM bounds b LEFT JOIN page p ON TRUE
         ORDER BY p.position`,
  );
  const head = Number(rows[0].head);
  const horizon = rows[0].first === null ? head : Number(rows[0].first) - 1;
  if (after > head)
    throw invalid(
      `Event cursor ${cursorOf(after)} is ahead of this engine's stream (latest ${cursorOf(head)}): it was not issued here. Subscribe without after, or with an eventCursor this engine gave you.`,
      'after',
      'unknown cursor',
    );
  if (after < horizon)
    throw invalid(
      `Event cursor ${cursorOf(after)} was pruned: events are kept ${ctx.config.eventRetentionHours} hours (ABADA_EVENT_RETENTION_HOURS) and the oldest kept follows ${cursorOf(horizon)}. Query eventCursor, reload the approvals or incidents you track, then subscribe with after: that cursor.`,
      'after',
      'pruned cursor',
    );
  const events = rows
    .filter((r) => r.position !== null)
    .map((r) => ({ ...(r.payload as StreamPayload), position: Number(r.position) }));
  // through: the replay is complete up to here (the head when the page was read, or a full page's last)
  return { events, through: events.length === limit ? events[events.length - 1].position : head };
}

/** The latest position handed out: a cursor taken before reading state misses nothing after it. */
export async function streamHead(ex: Executor): Promise<number> {
  const [r] = await query<{ position: string }>(ex, sql`SELECT position FROM stream_head WHERE id = 1`);
  return Number(r?.position ?? 0);
}

/**
 * The position of the latest event about each object; an object whose events were all pruned (or that
 * has none) gets the retention horizon, a cursor from which nothing about it is left to replay.
 */
export async function latestPositions(ex: Executor, ids: readonly string[]): Promise<Map<string, number>> {
  const rows = await query<{ object_id: string; position: string }>(
    ex,
    sql`WITH horizon AS (
          SELECT COALESCE((SELECT min(position) - 1 FROM stream_events),
                          (SELECT position FROM stream_head WHERE id = 1)) AS position)
        SELECT o.id AS object_id,
               COALESCE((SELECT max(e.position) FROM stream_events e WHERE e.object_id = o.id),
                        (SELECT position FROM horizon)) AS position
          FROM unnest(${`{${ids.join(',')}}`}::uuid[]) AS o(id)`,
  );
  return new Map(rows.map((r) => [r.object_id, Number(r.position)]));
}

const PRUNE_BATCH = 5000;

/**
 * Deletes the events committed more than ABADA_EVENT_RETENTION_HOURS ago, as a prefix of positions (so
 * the kept events stay contiguous and the horizon is the oldest kept minus one). Returns how many.
 */
export async function pruneStream(ctx: EngineContext): Promise<number> {
  const [cut] = await query<{ position: string | null }>(
    ctx.db,
    sql`SELECT position FROM stream_events
         WHERE committed_at < now() - make_interval(hours => ${ctx.config.eventRetentionHours})
         ORDER BY committed_at DESC LIMIT 1`,
  );
  if (!cut?.position) return 0;
  let total = 0;
  for (;;) {
    const r = await ctx.db.execute(sql`
      DELETE FROM stream_events WHERE id IN (
        SELECT id FROM stream_events WHERE position <= ${Number(cut.position)} ORDER BY position LIMIT ${PRUNE_BATCH})`);
    total += r.rowCount ?? 0;
    if ((r.rowCount ?? 0) < PRUNE_BATCH) return total;
  }
}

/** Prunes the stream at start and every 10 minutes; a failed round goes to `onError`. Returns stop(). */
export function startStreamPruning(ctx: EngineContext, onError: (e: unknown) => void): () => void {
  return startBackgroundRunner(ctx, () => pruneStream(ctx), {
    intervalMs: 10 * 60_000,
    runAtStart: true,
    onError,
  });
}
