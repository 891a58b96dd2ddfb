/**
 * Deciding an approval (SPEC §5): only a human of a candidate group, on the digest they saw; the first
 * decision wins and every refused attempt is recorded. Locks the external task, then the approval, never
 * the instance. decision-check.ts says whether the decision stands, decision-apply.ts carries it out;
 * here one transaction records the decision (accepted, or a refusal that is kept) and commits, and a
 * refusal is thrown only after that commit.
 */
import { eq } from 'drizzle-orm';
import { approvalDecisions, approvals, type ApprovalRow } from '../../db/schema.js';
import { EngineError, notFound } from '../../errors.js';
import { type Actor, type EngineContext, type Tx, isUuid, sameProject } from '../common/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { lockTask } from '../lease/index.js';
import { applyDecision } from './decision-apply.js';
import { checkDecision, type DecideInput, type Edit, type Refusal } from './decision-check.js';
import { traceDecision } from './trace.js';
import { type ApprovalView, toApprovalView } from './views.js';

export type { DecideInput } from './decision-check.js';

export async function getApprovalRow(
  ex: EngineContext['db'] | Tx,
  actor: Actor,
  id: string,
): Promise<ApprovalRow> {
  if (!isUuid(id)) throw notFound('approval', id);
  const [row] = await ex.select().from(approvals).where(eq(approvals.id, id)).limit(1);
  if (!row || !sameProject(actor, row.projectId)) throw notFound('approval', id);
  return row;
}

/** A person decides an approval; returns it as it stands after the decision. */
export async function decideApproval(
  ctx: EngineContext,
  actor: Actor,
  input: DecideInput,
): Promise<ApprovalView> {
  if (actor.kind !== 'HUMAN') {
    throw new EngineError(
      'FORBIDDEN',
      'Only a person (a human principal in a candidate group) can decide an approval; worker and admin credentials never can.',
    );
  }
  const found = await getApprovalRow(ctx.db, actor, input.approvalId);
  const outcome: { refusal: Refusal } | { approval: ApprovalRow } = await ctx.db.transaction(async (tx) => {
    const task = await lockTask(tx, actor, found.taskId);
    const [a] = await tx.select().from(approvals).where(eq(approvals.id, found.id)).for('update');
    const verdict = await checkDecision(tx, ctx, actor, task, a, input);
    if ('refusal' in verdict) {
      if (verdict.refusal.recorded)
        await recordDecision(tx, ctx, actor, a, input, verdict.refusal.error.code);
      return verdict;
    }
    const { step, edit } = verdict.accepted;
    await recordDecision(tx, ctx, actor, a, input, 'ACCEPTED', edit);
    return { approval: await applyDecision(tx, { ctx, actor, task, a, step, input, edit }) };
  });
  if ('refusal' in outcome) throw outcome.refusal.error;
  await traceDecision(ctx, actor, outcome.approval, input.decision, found.currentLevel);
  return toApprovalView(ctx, outcome.approval);
}

/** Every decision attempt is kept: the accepted one, and refusals that lost (with a history row). */
async function recordDecision(
  tx: Tx,
  ctx: EngineContext,
  actor: Actor,
  a: ApprovalRow,
  input: DecideInput,
  outcome: string,
  edit?: Edit | null,
): Promise<void> {
  await tx.insert(approvalDecisions).values({
    approvalId: a.id,
    level: a.currentLevel,
    principalId: actor.principalId,
    principalName: actor.name,
    decision: input.decision,
    digest: input.digest,
    comment: input.comment ?? null,
    editedDigest: edit?.digest ?? null,
    editedArgumentsEnc: edit ? ctx.sealer.sealJson(edit.args) : null,
    outcome,
    definitionVersion: a.definitionVersion,
    rule: a.rule,
    groups: actor.groups,
  });
  if (outcome === 'ACCEPTED') return;
  await appendHistory(tx, {
    projectId: a.projectId,
    processInstanceId: a.processInstanceId,
    eventType: 'APPROVAL_DECISION_REFUSED',
    actor: actorLabel(actor),
    taskId: a.taskId,
    approvalId: a.id,
    data: { code: outcome, decision: input.decision, digest: input.digest },
  });
}
