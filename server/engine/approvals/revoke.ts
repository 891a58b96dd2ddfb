/**
 * Revoking an approval (SPEC §11, seed 001 §五): an approval is not a permanent permission. A person
 * who decided it, or an admin, withdraws it until the call starts (then only its outcome can be dealt
 * with: `ALREADY_EXECUTING`); the model reads the revoker's reason as a rejection. A worker that had
 * taken the approved call but not started it loses its lease: its `STARTED` is refused `LEASE_NOT_HELD`.
 * Locks the external task, then the approval, never the instance (the decision's lock order).
 */
import { and, eq } from 'drizzle-orm';
import { approvalDecisions, approvals, steps, type ApprovalRow } from '../../db/schema.js';
import { EngineError, type ErrorCode } from '../../errors.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { actorLabel } from '../history/index.js';
import { isRetired, type LockedTaskRow, lockTask } from '../lease/index.js';
import { recordRefusal } from './attempts.js';
import { getApprovalRow } from './decide.js';
import { approvalStanding, lapseOf, reopenLapsed } from './standing.js';
import { toApprovalView } from './views.js';
import { expireApproval, stepOf, withdrawApproval } from './withdraw.js';
import { transaction } from '../../db/pg.js';

export interface RevokeInput {
  approvalId: string;
  comment: string;
}

/** Steps past this point have gone out (or may have): revoking can no longer stop the call. */
const EXECUTING = new Set(['STARTED', 'COMPLETED', 'FAILED', 'OUTCOME_UNKNOWN']);

/** A refused revoke, and the change that commits with it (an approval found expired). */
function refuse(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  effect?: (tx: Tx) => Promise<unknown>,
) {
  return { error: new EngineError(code, message, details), effect };
}
type Refused = ReturnType<typeof refuse>;

export async function revokeApproval(ctx: EngineContext, actor: Actor, input: RevokeInput) {
  if (!input.comment?.trim())
    throw new EngineError(
      'COMMENT_REQUIRED',
      'Say why you revoke the approval: the agent reads your comment.',
    );
  const comment = input.comment.trim();
  const found = await getApprovalRow(ctx.db, actor, input.approvalId);
  const outcome: { refused: Refused } | { row: ApprovalRow } = await transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, found.taskId);
    const [a] = await tx.select().from(approvals).where(eq(approvals.id, found.id)).for('update');
    const refused = await checkRevoke(tx, actor, task, a);
    if (refused) {
      if (refused.effect) await refused.effect(tx);
      await recordRefusal(tx, actor, a, {
        action: 'REVOKE',
        code: refused.error.code,
        decision: null,
        digest: a.digest,
        comment,
      });
      return { refused };
    }
    // parked or taken but not started: either way the task goes back to be handed out on this attempt
    const row = await withdrawApproval(tx, task, a, {
      state: 'REVOKED',
      comment,
      reason: `${a.state === 'APPROVED' ? 'Approval revoked' : 'Withdrawn'} by ${actor.name}: ${comment}`,
      actor: actorLabel(actor),
      data: { was: a.state, digest: a.digest },
    });
    return { row };
  });
  if ('refused' in outcome) throw outcome.refused.error;
  return toApprovalView(ctx, outcome.row);
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
  return checkTime(tx, actor, task, a);
}

/** Past its timeout (pending) or its window (approved), the approval expires rather than being revoked. */
async function checkTime(tx: Tx, actor: Actor, task: LockedTaskRow, a: ApprovalRow): Promise<Refused | null> {
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
