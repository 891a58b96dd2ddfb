/**
 * Deciding an approval (SPEC §5, §14): only a human of a candidate group, on the digest they saw, in
 * time; the first decision wins and every refused attempt is recorded. decision-check.ts says whether
 * the decision stands, decision-apply.ts carries it out.
 */
import { eq } from 'drizzle-orm';
import { approvals, type ApprovalRow, processInstances } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { traceApprovalWait, tracingOn } from '../../telemetry/index.js';
import { type Actor, type EngineContext, type Tx, isUuid, sameProject } from '../common/index.js';
import { type LockedTaskRow, lockTask } from '../lease/index.js';
import { type RefusedAttempt, recordRefusal } from './attempts.js';
import { applyDecision } from './decision-apply.js';
import { checkDecision, type DecideInput, type Refusal } from './decision-check.js';
import { toApprovalView } from './views.js';
import { transaction } from '../../db/pg.js';

/**
 * Locks the approval's task, then the approval, never the instance, and runs `act` (a decision or a
 * revoke). A refusal is kept as `attempt` with any change it makes, and thrown only after the commit.
 */
export async function actOnApproval(
  ctx: EngineContext,
  actor: Actor,
  approvalId: string,
  attempt: (a: ApprovalRow) => Omit<RefusedAttempt, 'code'>,
  act: (tx: Tx, task: LockedTaskRow, a: ApprovalRow) => Promise<Refusal | ApprovalRow>,
) {
  if (!isUuid(approvalId)) throw notFound('approval', approvalId);
  const [found] = await ctx.db.select().from(approvals).where(eq(approvals.id, approvalId)).limit(1);
  if (!found || !sameProject(actor, found.projectId)) throw notFound('approval', approvalId);
  const outcome = await transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, found.taskId);
    const [a] = await tx.select().from(approvals).where(eq(approvals.id, found.id)).for('update');
    const done = await act(tx, task, a);
    if (!('error' in done)) return done;
    if (done.effect) await done.effect(tx);
    if (done.recorded) await recordRefusal(tx, actor, a, { ...attempt(a), code: done.error.code });
    return done;
  });
  if ('error' in outcome) throw outcome.error;
  return { found, row: outcome };
}

/** A person decides an approval; returns it as it stands after the decision. */
export async function decideApproval(ctx: EngineContext, actor: Actor, input: DecideInput) {
  const { found, row } = await actOnApproval(
    ctx,
    actor,
    input.approvalId,
    () => ({
      action: 'DECIDE',
      decision: input.decision,
      digest: input.digest,
      comment: input.comment ?? null,
    }),
    async (tx, task, a) => {
      const d = { ctx, actor, task, a, input };
      const verdict = await checkDecision(tx, d);
      return 'error' in verdict ? verdict : applyDecision(tx, { ...d, ...verdict });
    },
  );
  await traceDecision(ctx, actor, row, input.decision, found.currentLevel);
  return toApprovalView(ctx, row);
}

/**
 * An accepted decision as the end of an approval wait in the instance's trace (docs/tracing.md): its
 * traceparent read only while tracing is on, after the commit (a span never describes a rolled-back one).
 */
async function traceDecision(
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
