/**
 * The database side of /metrics: aggregate queries run in parallel at scrape time. The task-state and
 * model-usage totals scan their tables: fine to millions of rows at a 15–60 s scrape interval; beyond that,
 * move them to a rollup. Every engine reports the same values: aggregate with max(), not sum().
 */
import { sql } from 'drizzle-orm';
import { type EngineContext, query } from '../common/index.js';

/** Upper bounds (seconds) of the approval decision-time histogram. */
export const DECISION_BUCKETS = [60, 300, 900, 1800, 3600, 4 * 3600, 8 * 3600, 24 * 3600, 72 * 3600];

export async function collectDbGauges(ctx: EngineContext) {
  const db = ctx.db;
  const offlineSecs = ctx.config.workerOfflineAfterMs / 1000;
  const bucketCols = sql.join(
    DECISION_BUCKETS.map(
      (b, i) =>
        sql`count(*) FILTER (WHERE decided_at - created_at <= make_interval(secs => ${b}))::bigint AS ${sql.identifier(`b${i}`)}`,
    ),
    sql`, `,
  );
  const [tasks, appr, decided, incidents, workers, usage, hooks] = await Promise.all([
    query<{ state: string; count: number }>(
      db,
      sql`SELECT state, count(*)::bigint AS count FROM external_tasks GROUP BY state`,
    ),
    query<{ pending: number; escalated: number }>(
      db,
      sql`SELECT count(*)::bigint AS pending, count(*) FILTER (WHERE escalated)::bigint AS escalated
            FROM approvals WHERE state = 'PENDING'`,
    ),
    query<Record<string, number>>(
      db,
      sql`SELECT ${bucketCols}, count(*)::bigint AS count,
                 coalesce(sum(extract(epoch FROM decided_at - created_at)), 0)::float8 AS sum
            FROM approvals WHERE decided_at IS NOT NULL AND state IN ('APPROVED', 'REJECTED')`,
    ),
    query<{ type: string; count: number }>(
      db,
      sql`SELECT type, count(*)::bigint AS count FROM incidents WHERE state = 'OPEN' GROUP BY type`,
    ),
    query<{ health: string; count: number }>(
      db,
      sql`SELECT CASE WHEN last_heartbeat_at IS NULL
                        OR last_heartbeat_at < now() - make_interval(secs => ${offlineSecs}) THEN 'OFFLINE'
                      WHEN consecutive_failures > 0 THEN 'ERROR' ELSE 'ONLINE' END AS health,
                 count(*)::bigint AS count
            FROM workers GROUP BY 1`,
    ),
    query<{ model: string; inputTokens: number; outputTokens: number; costUsd: number }>(
      db,
      sql`SELECT coalesce(model, 'unknown') AS model,
                 coalesce(sum((usage->>'inputTokens')::bigint), 0)::bigint AS "inputTokens",
                 coalesce(sum((usage->>'outputTokens')::bigint), 0)::bigint AS "outputTokens",
                 coalesce(sum(cost_usd), 0)::float8 AS "costUsd"
            FROM steps WHERE kind = 'MODEL_CALL' AND usage IS NOT NULL GROUP BY 1`,
    ),
    query<{ state: string; count: number }>(
      db,
      sql`SELECT state, count(*)::bigint AS count FROM webhook_deliveries
           WHERE state IN ('PENDING', 'FAILED') GROUP BY state`,
    ),
  ]);
  const d = decided[0] ?? {};
  return {
    tasksByState: tasks,
    approvalsPending: appr[0]?.pending ?? 0,
    approvalsEscalated: appr[0]?.escalated ?? 0,
    decision: {
      buckets: DECISION_BUCKETS.map((_b, i) => Number(d[`b${i}`] ?? 0)),
      count: Number(d.count ?? 0),
      sumSeconds: Number(d.sum ?? 0),
    },
    incidentsOpen: incidents,
    workersByHealth: workers,
    modelUsage: usage,
    webhookDeliveries: hooks,
  };
}
