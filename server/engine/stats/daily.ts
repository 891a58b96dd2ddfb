/**
 * The home page's numbers: per UTC day over the last N days, approvals opened and decided (with the
 * median time to decision of those decided that day), model cost by model, and incidents opened. Each
 * series is one group-by over a generated series of days, so a day with nothing in it is a zero, not a
 * gap; every query is limited to the caller's project (a global admin sees all projects).
 */
import { type SQL, sql } from 'drizzle-orm';
import { type Actor, type EngineContext, query } from '../common/index.js';

export const STATS_MAX_DAYS = 90;

export interface ApprovalDay {
  day: string;
  opened: number;
  decided: number;
  /** median of decided_at − created_at over the approvals decided that day; null when none was */
  medianDecisionSeconds: number | null;
}
export interface ModelCostDay {
  day: string;
  model: string;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}
export interface IncidentDay {
  day: string;
  opened: number;
}
export interface DailyStats {
  /** the first and last day of the window (UTC dates, inclusive) */
  from: string;
  to: string;
  approvals: ApprovalDay[];
  modelCost: ModelCostDay[];
  incidents: IncidentDay[];
}

/** `project_id = …` for a project's actor, nothing for a global one. */
function scoped(actor: Actor, column: SQL): SQL {
  return actor.projectId === null ? sql`true` : sql`${column} = ${actor.projectId}`;
}

/**
 * Daily numbers for the last `days` UTC days (today included), zero-filled. Only people and admins ask
 * (the resolver's scope); a worker's project numbers are not its business.
 */
export async function dailyStats(ctx: EngineContext, actor: Actor, days = 14): Promise<DailyStats> {
  const n = Math.min(Math.max(Math.trunc(days), 1), STATS_MAX_DAYS);
  const series = sql`SELECT generate_series((now() AT TIME ZONE 'UTC')::date - ${n - 1}::int,
                                            (now() AT TIME ZONE 'UTC')::date, '1 day')::date AS day`;
  const dayOf = (col: SQL) => sql`(${col} AT TIME ZONE 'UTC')::date`;
  const [approvals, cost, incidents] = await Promise.all([
    query<{ day: string; opened: number; decided: number; median: number | null }>(
      ctx.db,
      sql`WITH days AS (${series})
          SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
                 (SELECT count(*) FROM approvals a
                   WHERE ${scoped(actor, sql`a.project_id`)} AND ${dayOf(sql`a.created_at`)} = d.day)::int AS opened,
                 (SELECT count(*) FROM approvals a
                   WHERE ${scoped(actor, sql`a.project_id`)} AND ${dayOf(sql`a.decided_at`)} = d.day)::int AS decided,
                 (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.decided_at - a.created_at))
                    FROM approvals a
                   WHERE ${scoped(actor, sql`a.project_id`)} AND ${dayOf(sql`a.decided_at`)} = d.day)::float8 AS median
            FROM days d ORDER BY d.day`,
    ),
    query<{ day: string; model: string; cost: number; input: number; output: number }>(
      ctx.db,
      sql`WITH days AS (${series})
          SELECT to_char(${dayOf(sql`s.created_at`)}, 'YYYY-MM-DD') AS day, coalesce(s.model, 'unknown') AS model,
                 coalesce(sum(s.cost_usd), 0)::float8 AS cost,
                 coalesce(sum((s.usage->>'inputTokens')::bigint), 0)::int AS input,
                 coalesce(sum((s.usage->>'outputTokens')::bigint), 0)::int AS output
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
  return {
    from: approvals[0]?.day ?? '',
    to: approvals[approvals.length - 1]?.day ?? '',
    approvals: approvals.map((r) => ({
      day: r.day,
      opened: Number(r.opened),
      decided: Number(r.decided),
      medianDecisionSeconds: r.median == null ? null : Number(r.median),
    })),
    modelCost: cost.map((r) => ({
      day: r.day,
      model: r.model,
      costUsd: Number(r.cost),
      inputTokens: Number(r.input),
      outputTokens: Number(r.output),
    })),
    incidents: incidents.map((r) => ({ day: r.day, opened: Number(r.opened) })),
  };
}
