import { and, eq, sql } from 'drizzle-orm';
import { approvals, type ApprovalRow } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import {
  type Actor,
  type EngineContext,
  cursorCondition,
  cursorOrder,
  page,
  pageSize,
} from '../common/index.js';
import { toApprovalViews } from './views.js';

/** Humans see the approvals of their groups; admins see all of the project; workers none. */
export async function listApprovals(
  ctx: EngineContext,
  actor: Actor,
  args: {
    state?: ApprovalRow['state'] | null;
    mine?: boolean | null;
    first?: number | null;
    after?: string | null;
  },
) {
  if (actor.kind === 'WORKER')
    throw new EngineError('FORBIDDEN', 'A worker credential cannot read approvals.');
  const first = pageSize(args.first);
  const mine = args.mine ?? actor.kind === 'HUMAN';
  // mine: what the caller can decide now (the current level's groups). Otherwise a human sees what
  // maySeeApproval lets them open: any level's groups (a later level, or one they already decided).
  const current = sql`${approvals.candidateGroups} && ${sql.param(actor.groups)}::text[]`;
  const groupFilter = mine
    ? current
    : actor.kind === 'HUMAN'
      ? sql`(${current} OR EXISTS (SELECT 1 FROM jsonb_array_elements(${approvals.levels}) AS lv(g)
              WHERE lv.g ?| ${sql.param(actor.groups)}::text[]))`
      : undefined;
  const base = and(
    actor.projectId ? eq(approvals.projectId, actor.projectId) : undefined,
    args.state ? eq(approvals.state, args.state) : undefined,
    groupFilter,
  );
  const rows = await ctx.db
    .select()
    .from(approvals)
    .where(and(base, cursorCondition(approvals.createdAt, approvals.id, args.after)))
    .orderBy(...cursorOrder(approvals.createdAt, approvals.id))
    .limit(first + 1);
  const [{ count }] = await ctx.db.select({ count: sql<number>`count(*)::int` }).from(approvals).where(base);
  return page(await toApprovalViews(ctx, rows), first, count);
}
