/** Process instances, their user tasks and their history as callers see them. */
import { eq } from 'drizzle-orm';
import {
  processInstances,
  type HistoryEventRow,
  type ProcessInstanceRow,
  type UserTaskRow,
} from '../../db/schema.js';
import type { JsonObject } from '../../shared/types.js';
import { type Actor, type Executor, isUuid, sameProject } from '../common/index.js';
import { historyOfInstances } from '../history/index.js';

export interface InstanceView {
  id: string;
  projectId: string;
  definitionId: string;
  key: string;
  version: number;
  state: ProcessInstanceRow['state'];
  currentNodeId: string | null;
  variables: JsonObject;
  businessKey: string | null;
  /** delegation: the parent's external task waiting for this child */
  parentTaskId: string | null;
  depth: number;
  /** the trace id of the instance's trace (docs/tracing.md); null when it started untraced */
  traceId: string | null;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

export interface UserTaskView {
  id: string;
  processInstanceId: string;
  nodeId: string;
  candidateGroups: string[];
  state: UserTaskRow['state'];
  completedAt: Date | null;
  createdAt: Date;
}

/** One row of an instance's hash-chained history. */
export interface HistoryEventView {
  processInstanceId: string;
  /** the event's place in the instance's history: 1, 2, … */
  seq: number;
  /** the seq of the chained row that carries it (several events of one commit share a row) */
  row: number;
  eventType: string;
  actor: string;
  at: Date;
  taskId: string | null;
  attempt: number | null;
  sequence: number | null;
  approvalId: string | null;
  incidentId: string | null;
  data: JsonObject;
  hash: string;
}

export function instanceView(r: ProcessInstanceRow): InstanceView {
  return {
    id: r.id,
    projectId: r.projectId,
    definitionId: r.definitionId,
    key: r.key,
    version: r.version,
    state: r.state,
    currentNodeId: r.currentNodeId,
    variables: r.variables,
    businessKey: r.businessKey,
    parentTaskId: r.parentTaskId,
    depth: r.depth,
    traceId: r.traceparent?.split('-')[1] ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    endedAt: r.endedAt,
  };
}

export function userTaskView(r: UserTaskRow): UserTaskView {
  return {
    id: r.id,
    processInstanceId: r.processInstanceId,
    nodeId: r.nodeId,
    candidateGroups: r.candidateGroups,
    state: r.state,
    completedAt: r.completedAt,
    createdAt: r.createdAt,
  };
}

function historyEventView(r: HistoryEventRow, seq: number): HistoryEventView {
  return {
    processInstanceId: r.processInstanceId,
    seq,
    row: r.seq,
    eventType: r.eventType,
    actor: r.actor,
    at: r.at,
    taskId: r.taskId,
    attempt: r.attempt,
    sequence: r.sequence,
    approvalId: r.approvalId,
    incidentId: r.incidentId,
    data: r.data,
    hash: r.hash,
  };
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
    return historyEventView(r, ++seq);
  });
}
