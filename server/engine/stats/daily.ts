/**
 * The home page's numbers per UTC day: approvals opened and decided, model cost by model, incidents opened,
 * over a generated series of days (an empty day is a zero, not a gap), in the caller's project (or all).
 */
import { type SQL, sql } from 'drizzle-orm';
import { type Actor, type EngineContext, query } from '../common/index.js';

const STATS_MAX_DAYS = 90;

export type DailyStats = Awaited<ReturnType<typeof dailyStats>>;

/** `project_id = …` for a project's actor, nothing for a global one. */
function scoped(actor: Actor, column: SQL): SQL {
  return actor.projectId === null ? sql`true` : sql`${column} = ${actor.projectId}`;
}

/** The last `days` UTC days (today included); the resolver lets only people and admins ask (not workers). */
export async function dailyStats(ctx: EngineContext, actor: Actor, days = 14) {
  const n = Math.min(Math.max(Math.trunc(days), 1), STATS_MAX_DAYS);
  const series = sql`SELECT generate_series((now() AT TIME ZONE 'UTC')::date - ${n - 1}::int,
                                            (now() AT TIME ZONE 'UTC')::date, '1 day')::date AS day`;
  const dayOf = (col: SQL) => sql`(${col} AT TIME ZONE 'UTC')::date`;
  const [approvals, modelCost, incidents] = await Promise.all([
    // the median of decided_at − created_at over the approvals decided that day; null when none was
    query<{ day: string; opened: number; decided: number; medianDecisionSeconds: number | null }>(
      ctx.db,
      sql`WITH days AS (${series})
          SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
                 (SELECT count(*) FROM approvals a
                   WHERE ${scoped(actor, sql`a.project_id`)} AND ${dayOf(sql`a.created_at`)} = d.day)::int AS opened,
                 (SELECT count(*) FROM approvals a
                   WHERE ${scoped(actor, sql`a.project_id`)} AND ${dayOf(sql`a.decided_at`)} = d.day)::int AS decided,
                 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.decided_at - a.created_at))
                    FROM approvals a
                   WHERE ${scoped(actor, sql`a.project_id`)} AND ${dayOf(sql`a.decided_at`)} = d.day)::float8
                   AS "medianDecisionSeconds"
            FROM days d ORDER BY d.day`,
    ),
    query<{ day: string; model: string; costUsd: number; inputTokens: number; outputTokens: number }>(
      ctx.db,
      sql`WITH days AS (${series})
          SELECT to_char(${dayOf(sql`s.created_at`)}, 'YYYY-MM-DD') AS day, coalesce(s.model, 'unknown') AS model,
                 coalesce(sum(s.cost_usd), 0)::float8 AS "costUsd",
                 coalesce(sum((s.usage->>'inputTokens')::bigint), 0)::int AS "inputTokens",
                 coalesce(sum((s.usage->>'outputTokens')::bigint), 0)::int AS "outputTokens"
            FROM steps s JOIN external_tasks t ON t.id = s.task_id
           WHERE s.kind = 'MODEL_CALL' AND s.usage IS NOT NULL AND ${scoped(actor, sql`t.project_id`)}
             AND ${dayOf(sql`s.created_at`)} >= (SELECT min(day) FROM days)
           GROUP BY 1, 2 ORDER BY 1, 2`,
    ),
    query<{ day: string; opened: number }>(
      ctx.db,
      sql`WITH days AS (${series})
          SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
                 (SELECT count(*) FROM incidents i
                   WHERE ${scoped(actor, sql`i.project_id`)} AND ${dayOf(sql`i.created_at`)} = d.day)::int AS opened
            FROM days d ORDER BY d.day`,
    ),
  ]);
  // from and to: the first and last day of the window (UTC dates, inclusive); int and float8 are numbers
  const [from, to] = [approvals[0]?.day ?? '', approvals[approvals.length - 1]?.day ?? ''];
  return { from, to, approvals, modelCost, incidents };
}
