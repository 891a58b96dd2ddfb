/** Process instances, their user tasks and their history as callers see them. */
import { eq } from 'drizzle-orm';
import {
  processInstances,
  type HistoryEventRow,
  type ProcessInstanceRow,
  type UserTaskRow,
} from '../../db/schema.js';
import { type Actor, type Executor, isUuid, omit, sameProject } from '../common/index.js';
import { historyOfInstances } from '../history/index.js';

const INSTANCE_HIDDEN = ['startedBy', 'parentSequence', 'parentAttempt', 'traceparent'] as const;

export type InstanceView = Omit<ProcessInstanceRow, (typeof INSTANCE_HIDDEN)[number]> & {
  /** the trace id of the instance's trace (docs/tracing.md); null when it started untraced */
  traceId: string | null;
};
export type UserTaskView = Omit<UserTaskRow, 'projectId' | 'completedBy'>;
/** One event of an instance's hash-chained history. */
export type HistoryEventView = Omit<HistoryEventRow, 'id' | 'projectId' | 'idx'> & {
  /** the event's place in the instance's history: 1, 2, … */
  seq: number;
  /** the seq of the chained row that carries it (several events of one commit share a row) */
  row: number;
};

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

/** The history of several instances, one view per event in chain order (one query for a page). */
export async function historyOf(ex: Executor, instanceIds: readonly string[]): Promise<HistoryEventView[]> {
  let instance = '';
  let seq = 0;
  return (await historyOfInstances(ex, instanceIds)).map((r) => {
    if (r.processInstanceId !== instance) [instance, seq] = [r.processInstanceId, 0];
    return { ...omit(r, ['id', 'projectId', 'idx']), seq: ++seq, row: r.seq };
  });
}
