/**
 * Incidents: durable rows that ask a person to look (TOOL_OUTCOME_UNKNOWN, TASK_FAILED, FETCH_REJECTED,
 * …), listed, subscribed to and resolved with a comment. Resolving a TOOL_OUTCOME_UNKNOWN feeds the
 * person's statement back into the journal as the call's result and lets the agent resume.
 */
import { and, eq, sql } from 'drizzle-orm';
import {
  externalTasks,
  incidents,
  processInstances,
  steps,
  taskReports,
  type IncidentRow,
} from '../../db/schema.js';
import { EngineError, notFound, invalid } from '../../errors.js';
import {
  type Actor,
  type EngineContext,
  type Executor,
  type Tx,
  sameProject,
  isUuid,
  cursorCondition,
  cursorOrder,
  page,
} from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { transaction } from '../../db/pg.js';

/** An incident as callers see it: its row less resolvedBy (the resolution names them) and dedupeKey. */
function incidentView({ resolvedBy, dedupeKey, ...view }: IncidentRow) {
  return view;
}

export type IncidentView = ReturnType<typeof incidentView>;

export type OpenIncident = Pick<
  typeof incidents.$inferInsert,
  'type' | 'message' | 'processInstanceId' | 'taskId' | 'attempt' | 'sequence' | 'workerId'
> & { projectId: string | null };

export async function openIncident(ex: Executor, i: OpenIncident, actor = 'engine'): Promise<IncidentRow> {
  const [row] = await ex.insert(incidents).values(i).returning();
  if (i.processInstanceId && i.projectId) {
    await appendHistory(ex, {
      projectId: i.projectId,
      processInstanceId: i.processInstanceId,
      eventType: 'INCIDENT_OPENED',
      actor,
      taskId: i.taskId,
      attempt: i.attempt,
      sequence: i.sequence,
      incidentId: row.id,
      data: { type: i.type },
    });
  }
  await notify(ex, { type: 'incident', incidentId: row.id, projectId: i.projectId });
  return row;
}

export interface ResolveIncidentInput {
  id: string;
  comment: string;
  /** TOOL_OUTCOME_UNKNOWN: did the call take effect? */
  happened?: boolean | null;
  /** TOOL_OUTCOME_UNKNOWN: what it returned (when it happened), fed to the agent as the call's result */
  result?: unknown;
}

/** An incident the actor may see, or NOT_FOUND. */
export async function getIncident(ex: Executor, actor: Actor, id: string): Promise<IncidentView> {
  if (!isUuid(id)) throw notFound('incident', id);
  const [row] = await ex.select().from(incidents).where(eq(incidents.id, id)).limit(1);
  if (!row || !sameProject(actor, row.projectId)) throw notFound('incident', id);
  return incidentView(row);
}

/** Resolves an incident; for an unknown tool outcome the task reopens on the same attempt. */
export async function resolveIncident(ctx: EngineContext, actor: Actor, input: ResolveIncidentInput) {
  if (actor.kind === 'WORKER')
    throw new EngineError('FORBIDDEN', 'A worker credential cannot resolve incidents; a person must.');
  if (!input.comment?.trim())
    throw new EngineError(
      'COMMENT_REQUIRED',
      'Say what you checked: a comment is required to resolve an incident.',
    );
  const inc0 = await getIncident(ctx.db, actor, input.id);
  const resolved = await transaction(ctx.db, async (tx) => {
    const label = actorLabel(actor);
    if (inc0.type === 'TOOL_OUTCOME_UNKNOWN' && inc0.taskId) {
      if (typeof input.happened !== 'boolean') {
        throw invalid(
          'State whether the call took effect (happened: true or false).',
          'happened',
          'required for TOOL_OUTCOME_UNKNOWN',
        );
      }
      await feedOutcome(tx, ctx, inc0, input, label);
    }
    const [row] = await tx
      .update(incidents)
      .set({
        state: 'RESOLVED',
        resolvedBy: actor.principalId,
        resolvedAt: sql`now()`,
        resolution: { comment: input.comment, happened: input.happened ?? null, by: actor.name },
      })
      .where(and(eq(incidents.id, inc0.id), eq(incidents.state, 'OPEN')))
      .returning();
    if (!row) throw new EngineError('ALREADY_DECIDED', 'This incident was already resolved by someone else.');
    if (row.processInstanceId && row.projectId) {
      await appendHistory(tx, {
        projectId: row.projectId,
        processInstanceId: row.processInstanceId,
        eventType: 'INCIDENT_RESOLVED',
        actor: label,
        taskId: row.taskId,
        incidentId: row.id,
        data: { type: row.type, happened: input.happened ?? null },
      });
    }
    return row;
  });
  return incidentView(resolved);
}

/**
 * A person's statement about an unknown tool outcome becomes the step's response; the task that waited
 * FAILED for them resumes on the same attempt, or stays retired when its instance is no longer active.
 */
async function feedOutcome(
  tx: Tx,
  ctx: EngineContext,
  inc: IncidentView,
  input: ResolveIncidentInput,
  label: string,
) {
  const [task] = await tx.select().from(externalTasks).where(eq(externalTasks.id, inc.taskId!)).for('update');
  const response = input.happened
    ? { resolvedByPerson: true, happened: true, result: input.result ?? null, comment: input.comment }
    : { resolvedByPerson: true, happened: false, comment: input.comment };
  await tx
    .update(steps)
    .set({ responseEnc: ctx.sealer.sealJson(response), comment: input.comment, updatedAt: sql`now()` })
    .where(
      and(eq(steps.taskId, inc.taskId!), eq(steps.attempt, inc.attempt!), eq(steps.sequence, inc.sequence!)),
    );
  const waiting =
    task?.state === 'FAILED' && task.errorType === 'TOOL_OUTCOME_UNKNOWN' && task.attempt === inc.attempt;
  if (!waiting) return;
  const [inst] = await tx
    .select({ state: processInstances.state })
    .from(processInstances)
    .where(eq(processInstances.id, task.processInstanceId))
    .for('share'); // lock order task → instance; a concurrent suspend then sees the reopened task
  const { projectId, processInstanceId, id: taskId, attempt } = task;
  const history = { projectId, processInstanceId, actor: label, taskId, attempt };
  // Retired meanwhile: a suspended instance's resume reopens the task (the fact is then reused); a
  // cancelled or ended one keeps it retired. Either way it is not handed out now.
  if (inst && inst.state !== 'ACTIVE') {
    const suspended = inst.state === 'SUSPENDED';
    await tx
      .update(externalTasks)
      .set({
        state: 'CANCELLED',
        errorType: suspended ? 'SUSPENDED' : 'CANCELLED',
        errorMessage: null,
        updatedAt: sql`now()`,
        endedAt: sql`now()`,
      })
      .where(eq(externalTasks.id, task.id));
    return appendHistory(tx, {
      ...history,
      eventType: suspended ? 'TASK_SUSPENDED' : 'TASK_CANCELLED',
      data: { reason: 'TOOL_OUTCOME_RESOLVED', instanceState: inst.state },
    });
  }
  await tx
    .update(externalTasks)
    .set({
      state: 'OPEN',
      errorType: null,
      errorMessage: null,
      availableAt: sql`now()`,
      endedAt: null,
      leaseExpiries: 0,
      updatedAt: sql`now()`,
    })
    .where(eq(externalTasks.id, task.id));
  // The attempt goes on: a failure reported before it waited for this person is history, not the
  // answer to the next failTask of the same attempt (task_reports dedupes per task/attempt/operation).
  await tx
    .delete(taskReports)
    .where(
      and(
        eq(taskReports.taskId, task.id),
        eq(taskReports.attempt, task.attempt),
        eq(taskReports.operation, 'fail'),
      ),
    );
  await appendHistory(tx, {
    ...history,
    eventType: 'TASK_REOPENED',
    sequence: inc.sequence,
    data: { reason: 'TOOL_OUTCOME_RESOLVED', happened: input.happened },
  });
  await notifyTask(tx, task, 'OPEN');
}

export async function listIncidents(
  ctx: EngineContext,
  actor: Actor,
  args: { state?: 'OPEN' | 'RESOLVED' | null; first?: number | null; after?: string | null },
) {
  const first = Math.min(Math.max(args.first ?? 50, 1), 200);
  const base = and(
    actor.projectId !== null ? eq(incidents.projectId, actor.projectId) : undefined,
    args.state ? eq(incidents.state, args.state) : undefined,
  );
  const rows = await ctx.db
    .select()
    .from(incidents)
    .where(and(base, cursorCondition(incidents.createdAt, incidents.id, args.after)))
    .orderBy(...cursorOrder(incidents.createdAt, incidents.id))
    .limit(first + 1);
  const [{ count }] = await ctx.db.select({ count: sql<number>`count(*)::int` }).from(incidents).where(base);
  return page(rows.map(incidentView), first, count);
}
