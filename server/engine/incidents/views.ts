/** An incident as callers see it. */
import type { IncidentRow } from '../../db/schema.js';
import type { IncidentResolution } from '../../shared/types.js';

export interface IncidentView {
  id: string;
  /** null for incidents of a global principal (FETCH_REJECTED of the first-party worker) */
  projectId: string | null;
  type: string;
  state: IncidentRow['state'];
  message: string;
  processInstanceId: string | null;
  taskId: string | null;
  attempt: number | null;
  sequence: number | null;
  workerId: string | null;
  resolution: IncidentResolution | null;
  resolvedAt: Date | null;
  /** how many times the condition was seen while the incident was open */
  count: number;
  lastSeenAt: Date;
  createdAt: Date;
}

export function incidentView(r: IncidentRow): IncidentView {
  return {
    id: r.id,
    projectId: r.projectId,
    type: r.type,
    state: r.state,
    message: r.message,
    processInstanceId: r.processInstanceId,
    taskId: r.taskId,
    attempt: r.attempt,
    sequence: r.sequence,
    workerId: r.workerId,
    resolution: r.resolution,
    resolvedAt: r.resolvedAt,
    count: r.count,
    lastSeenAt: r.lastSeenAt,
    createdAt: r.createdAt,
  };
}
