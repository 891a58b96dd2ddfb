/** The paged list of process instances (the caller's project) and the audit check of one instance. */
import { and, eq, sql } from 'drizzle-orm';
import { processInstances } from '../../db/schema.js';
import {
  type Actor,
  type EngineContext,
  cursorCondition,
  cursorOrder,
  page,
  pageSize,
} from '../common/index.js';
import { verifyChain } from '../history/index.js';
import { getInstance } from './start.js';
import { instanceView } from './views.js';

export async function listInstances(
  ctx: EngineContext,
  actor: Actor,
  args: { state?: string | null; first?: number | null; after?: string | null; key?: string | null },
) {
  const first = pageSize(args.first);
  const base = and(
    actor.projectId ? eq(processInstances.projectId, actor.projectId) : undefined,
    args.state ? eq(processInstances.state, args.state as never) : undefined,
    args.key ? eq(processInstances.key, args.key) : undefined,
  );
  const rows = await ctx.db
    .select()
    .from(processInstances)
    .where(and(base, cursorCondition(processInstances.createdAt, processInstances.id, args.after)))
    .orderBy(...cursorOrder(processInstances.createdAt, processInstances.id))
    .limit(first + 1);
  const [{ count }] = await ctx.db
    .select({ count: sql<number>`count(*)::int` })
    .from(processInstances)
    .where(base);
  return page(rows.map(instanceView), first, count);
}

export async function verifyAudit(ctx: EngineContext, actor: Actor, processInstanceId: string) {
  await getInstance(ctx.db, actor, processInstanceId);
  return verifyChain(ctx.db, processInstanceId);
}
