/** The journal as callers see it: step rows with their sealed payloads opened. */
import { and, asc, eq, inArray, lt, sql } from 'drizzle-orm';
import { steps, type StepRow } from '../../db/schema.js';
import type { EngineContext, Executor } from '../common/index.js';

export interface StepView {
  taskId: string;
  attempt: number;
  sequence: number;
  kind: StepRow['kind'];
  state: StepRow['state'];
  toolRef: string | null;
  model: string | null;
  request: unknown;
  response: unknown;
  error: string | null;
  digest: string;
  idempotencyKey: string | null;
  comment: string | null;
  reused: boolean;
  usage: unknown;
  costUsd: number | null;
  approvalId: string | null;
  purpose: StepRow['purpose'];
  reconciled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The view of a step row. Payloads are opened (decrypted and parsed) only when read, once: a journal
 * answer usually asks for the task state alone.
 */
export function toStepView(ctx: EngineContext, r: StepRow): StepView {
  const opened = new Map<string, unknown>();
  const open = (key: 'requestEnc' | 'responseEnc' | 'errorEnc') => {
    if (!opened.has(key)) opened.set(key, ctx.sealer.openJson(r[key]));
    return opened.get(key);
  };
  return {
    taskId: r.taskId,
    attempt: r.attempt,
    sequence: r.sequence,
    kind: r.kind,
    state: r.state,
    toolRef: r.toolRef,
    model: r.model,
    get request() {
      return open('requestEnc');
    },
    get response() {
      return open('responseEnc');
    },
    get error() {
      return open('errorEnc') as string | null;
    },
    digest: r.digest,
    idempotencyKey: r.idempotencyKey,
    comment: r.comment,
    reused: r.reused,
    usage: r.usage,
    costUsd: r.costUsd,
    approvalId: r.approvalId,
    purpose: r.purpose,
    reconciled: r.reconciled,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** The journal of each task: every attempt, or only the attempt each task is on now. */
export async function loadSteps(
  ex: Executor,
  ctx: EngineContext,
  taskIds: string[],
  opts: { currentAttemptOnly?: boolean } = {},
): Promise<StepView[]> {
  if (taskIds.length === 0) return [];
  const rows = await ex
    .select()
    .from(steps)
    .where(
      opts.currentAttemptOnly
        ? and(
            inArray(steps.taskId, taskIds),
            sql`${steps.attempt} = (SELECT t.attempt FROM external_tasks t WHERE t.id = ${steps.taskId})`,
          )
        : inArray(steps.taskId, taskIds),
    )
    .orderBy(asc(steps.taskId), asc(steps.attempt), asc(steps.sequence));
  return rows.map((r) => toStepView(ctx, r));
}

/**
 * Writes of earlier attempts that took effect or may have (COMPLETED, APPROVED, STARTED,
 * OUTCOME_UNKNOWN): the worker needs them to avoid repeating a side effect; the engine answers a
 * matching call with `reused`.
 */
export async function loadEarlierWrites(
  ex: Executor,
  ctx: EngineContext,
  taskId: string,
  attempt: number,
): Promise<StepView[]> {
  if (attempt <= 1) return [];
  const rows = await ex
    .select()
    .from(steps)
    .where(
      and(
        eq(steps.taskId, taskId),
        lt(steps.attempt, attempt),
        eq(steps.kind, 'TOOL_CALL'),
        sql`${steps.policy} IN ('write', 'approval_required')`,
        sql`${steps.state} IN ('COMPLETED', 'APPROVED', 'STARTED', 'OUTCOME_UNKNOWN')`,
      ),
    )
    .orderBy(asc(steps.attempt), asc(steps.sequence));
  return rows.map((r) => toStepView(ctx, r));
}
