/** The shapes the trace reads from the instance query (structural, so any query selecting them fits). */
export interface TraceStep {
  attempt: number;
  sequence: number;
  kind: string;
  state: string;
  toolRef: string | null;
  model: string | null;
  request: unknown;
  response: unknown;
  usage: unknown;
  costUsd: number | null;
  comment: string | null;
  error: string | null;
  approvalId: string | null;
  createdAt: string;
  updatedAt: string;
  /** CALL (the model's), PRECONDITION or LOOKUP (the engine's reads around an approved write) */
  purpose?: string | null;
  reconciled?: boolean;
  toolDescription?: string | null;
}
export interface TraceTask {
  id: string;
  nodeId: string;
  state: string;
  steps: readonly TraceStep[];
}
export interface TraceEvent {
  seq: number;
  eventType: string;
  at: string;
  taskId: string | null;
  attempt: number | null;
  sequence: number | null;
  approvalId: string | null;
  actor: string;
  data?: unknown;
}

export const stepKey = (taskId: string, attempt: number | null, sequence: number | null) =>
  `${taskId}:${attempt}:${sequence}`;
