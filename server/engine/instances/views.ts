/** Process instances as callers see them: one, a page, their user tasks, history and audit check. */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import {
  historyEvents,
  processInstances,
  type ProcessInstanceRow,
  type UserTaskRow,
} from '../../db/schema.js';
import { notFound } from '../../errors.js';
import {
  type Actor,
  type EngineContext,
  type Executor,
  cursorCondition,
  cursorOrder,
  isUuid,
  omit,
  page,
  pageSize,
  sameProject,
} from '../common/index.js';
import { verifyChain } from '../history/index.js';

const INSTANCE_HIDDEN = ['startedBy', 'parentSequence', 'parentAttempt', 'traceparent'] as const;

export type InstanceView = Omit<ProcessInstanceRow, (typeof INSTANCE_HIDDEN)[number]> & {
  /** the trace id of the instance's trace (docs/tracing.md); null when it started untraced */
  traceId: string | null;
};
export type UserTaskView = Omit<UserTaskRow, 'projectId' | 'completedBy'>;
/** One event of an instance's hash-chained history. */
export type HistoryEventView = Awaited<ReturnType<typeof historyOf>>[number];

export function instanceView(r: ProcessInstanceRow): InstanceView {
  return { ...omit(r, INSTANCE_HIDDEN), traceId: r.traceparent?.split('-')[1] ?? null };
}

export function userTaskView(r: UserTaskRow): UserTaskView {
  return omit(r, ['projectId', 'completedBy']);
}

/** An instance the actor may see, or null (never revealing other projects' ids). */
export async function loadInstanceFor(ex: Executor, actor: Actor, id: string): Promise<InstanceView | null> {
  if (!isUuid(id)) return null;
  const [row] = await ex.select().from(processInstances).where(eq(processInstances.id, id)).limit(1);
  return row && sameProject(actor, row.projectId) ? instanceView(row) : null;
}

/**
 * The history of several instances, one view per event in chain order (a row's own event, then the
 * events it carries), in one query for a page. `seq`: the event's place in its instance's history
 * (1, 2, …); `row`: the seq of the chained row that carries it (several events of one commit share a row).
 */
export async function historyOf(ex: Executor, instanceIds: readonly string[]) {
  const rows = await ex
    .select()
    .from(historyEvents)
    .where(inArray(historyEvents.processInstanceId, [...instanceIds]))
    .orderBy(asc(historyEvents.processInstanceId), asc(historyEvents.seq), asc(historyEvents.idx));
  let instance = '';
  let seq = 0;
  return rows.map((r) => {
    if (r.processInstanceId !== instance) [instance, seq] = [r.processInstanceId, 0];
    return { ...omit(r, ['id', 'projectId', 'idx']), seq: ++seq, row: r.seq };
  });
}

/** Loads an instance the actor may see, or throws NOT_FOUND (never revealing other projects' ids). */
export async function getInstance(ex: Executor, actor: Actor, id: string): Promise<ProcessInstanceRow> {
  if (!isUuid(id)) throw notFound('process instance', id);
  const [row] = await ex.select().from(processInstances).where(eq(processInstances.id, id)).limit(1);
  if (!row || !sameProject(actor, row.projectId)) throw notFound('process instance', id);
  return row;
}

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
