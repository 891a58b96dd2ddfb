/** An external task as callers see it: the row without its agent work (a worker gets that with its lease). */
import type { ExternalTaskRow } from '../../db/schema.js';
import type { AttemptMetadata } from '../../shared/types.js';

export interface TaskView {
  id: string;
  projectId: string;
  processInstanceId: string;
  nodeId: string;
  nodeType: ExternalTaskRow['nodeType'];
  topicName: string;
  state: ExternalTaskRow['state'];
  priority: number;
  attempt: number;
  maxAttempts: number;
  workerId: string | null;
  leaseExpiresAt: Date | null;
  availableAt: Date;
  errorType: string | null;
  errorMessage: string | null;
  metadata: AttemptMetadata | null;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

export function taskView(r: ExternalTaskRow): TaskView {
  return {
    id: r.id,
    projectId: r.projectId,
    processInstanceId: r.processInstanceId,
    nodeId: r.nodeId,
    nodeType: r.nodeType,
    topicName: r.topicName,
    state: r.state,
    priority: r.priority,
    attempt: r.attempt,
    maxAttempts: r.maxAttempts,
    workerId: r.workerId,
    leaseExpiresAt: r.leaseExpiresAt,
    availableAt: r.availableAt,
    errorType: r.errorType,
    errorMessage: r.errorMessage,
    metadata: r.metadata,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    endedAt: r.endedAt,
  };
}
