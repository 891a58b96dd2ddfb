/**
 * Revoking an approval (SPEC §11, seed 001 §五): a person who decided it, or an admin, withdraws it until
 * the call starts (then `ALREADY_EXECUTING`); the model reads the reason as a rejection. A worker that took
 * the approved call but did not start it loses its lease: its `STARTED` is refused `LEASE_NOT_HELD`.
 */
import { and, eq } from 'drizzle-orm';
import { approvalDecisions, steps, type ApprovalRow } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { actorLabel } from '../history/index.js';
import { isRetired, type LockedTaskRow } from '../lease/index.js';
import { actOnApproval } from './decide.js';
import { refuse } from './decision-check.js';
import { approvalStanding, lapseOf, reopenLapsed } from './standing.js';
import { toApprovalView } from './views.js';
import { expireApproval, stepOf, withdrawApproval } from './withdraw.js';

/** Steps past this point have gone out (or may have): revoking can no longer stop the call. */
const EXECUTING = new Set(['STARTED', 'COMPLETED', 'FAILED', 'OUTCOME_UNKNOWN']);

export async function revokeApproval(
  ctx: EngineContext,
  actor: Actor,
  input: { approvalId: string; comment: string },
) {
  if (!input.comment?.trim())
    throw new EngineError(
      'COMMENT_REQUIRED',
      'Say why you revoke the approval: the agent reads your comment.',
    );
  const comment = input.comment.trim();
  const { row } = await actOnApproval(
    ctx,
    actor,
    input.approvalId,
    (a) => ({ action: 'REVOKE', decision: null, digest: a.digest, comment }),
    async (tx, task, a) =>
      // parked or taken but not started: either way the task goes back to be handed out on this attempt
      (await checkRevoke(tx, actor, task, a)) ??
      withdrawApproval(tx, task, a, {
        state: 'REVOKED',
        comment,
        reason: `${a.state === 'APPROVED' ? 'Approval revoked' : 'Withdrawn'} by ${actor.name}: ${comment}`,
        actor: actorLabel(actor),
        data: { was: a.state, digest: a.digest },
      }),
  );
  return toApprovalView(ctx, row);
}

/** Who may revoke what, and when: an admin any approval of the project; a person one they decided. */
async function checkRevoke(tx: Tx, actor: Actor, task: LockedTaskRow, a: ApprovalRow) {
  if (actor.kind === 'WORKER')
    return refuse('FORBIDDEN', 'A worker credential cannot revoke an approval; a person or an admin can.');
  if (actor.kind !== 'ADMIN') {
    const [decided] = await tx
      .select({ id: approvalDecisions.id })
      .from(approvalDecisions)
      .where(
        and(
          eq(approvalDecisions.approvalId, a.id),
          eq(approvalDecisions.principalId, actor.principalId),
          eq(approvalDecisions.outcome, 'ACCEPTED'),
          eq(approvalDecisions.action, 'DECIDE'),
        ),
      )
      .limit(1);
    if (!decided)
      return refuse('FORBIDDEN', 'Only a person who decided this approval, or an admin, can revoke it.');
  }
  if (isRetired(task))
    return refuse('WORK_RETIRED', 'The work this approval was for was cancelled or suspended.');
  if (a.state !== 'PENDING' && a.state !== 'APPROVED') {
    return refuse(
      'ALREADY_DECIDED',
      `The approval is ${a.state}; only a pending or approved call can be revoked.`,
      { state: a.state },
    );
  }
  const [step] = await tx.select({ state: steps.state }).from(steps).where(stepOf(a));
  if (step && EXECUTING.has(step.state)) {
    throw new EngineError(
      'ALREADY_EXECUTING',
      `The approved call (step ${a.sequence}) is already ${step.state}; it can no longer be revoked. Open an incident or act on the outcome instead.`,
      { stepState: step.state },
    );
  }
  // Past its timeout (pending) or its window (approved), the approval expires rather than being revoked.
  if (a.state === 'PENDING' && a.expiresAt && a.expiresAt.getTime() <= Date.now()) {
    return refuse(
      'APPROVAL_EXPIRED',
      `This approval expired at ${a.expiresAt.toISOString()} with no decision; the call will not run as proposed.`,
      { expiresAt: a.expiresAt.toISOString() },
      (ex) => expireApproval(ex, task, a),
    );
  }
  if (a.state !== 'APPROVED') return null;
  const standing = await approvalStanding(tx, a.id);
  const binding = task.agentWork?.toolBindings.find((b) => b.ref === a.toolRef);
  const lapse = standing ? lapseOf(standing, binding, new Date()) : null;
  if (lapse?.state !== 'EXPIRED') return null;
  return refuse(
    'APPROVAL_EXPIRED',
    `This approval was valid until ${String(lapse.details.validUntil)}; it has expired and a new version of the call waits for a decision. Reject that one if the call must not run.`,
    lapse.details,
    (ex) => reopenLapsed(ex, { task, old: a, lapse, binding, actor: actorLabel(actor) }),
  );
}
