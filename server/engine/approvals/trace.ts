/**
 * An accepted decision, as the end of an approval wait in the instance's trace (docs/tracing.md). One
 * read of the instance's traceparent, and only while tracing is on; after the decision's commit, so a
 * span never describes a decision that rolled back.
 */
import { eq } from 'drizzle-orm';
import { type ApprovalRow, processInstances } from '../../db/schema.js';
import { traceApprovalWait, tracingOn } from '../../telemetry/index.js';
import type { Actor, EngineContext } from '../common/index.js';

export async function traceDecision(
  ctx: EngineContext,
  actor: Actor,
  a: ApprovalRow,
  decision: string,
  level: number,
): Promise<void> {
  if (!tracingOn()) return;
  // The decision has committed: a failed read loses the span's parent, never the decider's answer.
  const [inst] = await ctx.db
    .select({ traceparent: processInstances.traceparent })
    .from(processInstances)
    .where(eq(processInstances.id, a.processInstanceId))
    .limit(1)
    .catch(() => []);
  traceApprovalWait(inst?.traceparent ?? null, {
    approvalId: a.id,
    taskId: a.taskId,
    processInstanceId: a.processInstanceId,
    toolRef: a.toolRef,
    sequence: a.sequence,
    openedAt: a.createdAt,
    level: level + 1,
    decidedBy: actor.name,
    decision,
    state: a.state,
  });
}
