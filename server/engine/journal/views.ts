/** The journal as callers see it: step rows with their sealed payloads opened. */
import { and, asc, inArray, lt, sql } from 'drizzle-orm';
import { steps, type StepRow } from '../../db/schema.js';
import type { EngineContext, Executor } from '../common/index.js';
import { writesOf } from '../lease/index.js';

/**
 * A step row as callers see it: its policy and key id left out, its sealed payloads opened (decrypted
 * and parsed) only when read, once: most answers need the task state alone.
 */
export function toStepView(ctx: EngineContext, r: StepRow) {
  const { policy, requestEnc, responseEnc, errorEnc, keyId, ...view } = r;
  const opened = new Map<string, unknown>();
  const open = (key: 'requestEnc' | 'responseEnc' | 'errorEnc') => {
    if (!opened.has(key)) opened.set(key, ctx.sealer.openJson(r[key]));
    return opened.get(key);
  };
  return {
    ...view,
    get request() {
      return open('requestEnc');
    },
    get response() {
      return open('responseEnc');
    },
    get error() {
      return open('errorEnc') as string | null;
    },
  };
}

export type StepView = ReturnType<typeof toStepView>;

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

/** Earlier attempts' writes that took effect or may have, so the worker repeats none (matches: `reused`). */
export async function loadEarlierWrites(ex: Executor, ctx: EngineContext, taskId: string, attempt: number) {
  if (attempt <= 1) return [];
  const rows = await ex
    .select()
    .from(steps)
    .where(
      and(
        writesOf(taskId),
        lt(steps.attempt, attempt),
        sql`${steps.state} IN ('COMPLETED', 'APPROVED', 'STARTED', 'OUTCOME_UNKNOWN')`,
      ),
    )
    .orderBy(asc(steps.attempt), asc(steps.sequence));
  return rows.map((r) => toStepView(ctx, r));
}
