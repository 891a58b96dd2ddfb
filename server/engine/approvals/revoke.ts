/**
 * Revoking an approval (SPEC §11, seed 001 §五): an approval is not a permanent permission. A person
 * who decided it, or an admin, withdraws it until the call starts; afterwards the call is already
 * executing and only its outcome can be dealt with (`ALREADY_EXECUTING`). The approval becomes REVOKED,
 * its step REJECTED with the revoker's reason — the model reads it as a rejection — and the task is
 * handed out again on the same attempt. A worker that had already taken the approved call (leased, not
 * yet started) loses its lease: its `STARTED` is refused `LEASE_NOT_HELD` and it lets the task go.
 * Locks the external task, then the approval, never the instance (the decision's lock order).
 */
import { withdrawApproval } from './withdraw.js';
import { and, eq } from 'drizzle-orm';
import { approvalDecisions, approvals, steps } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { actorLabel } from '../history/index.js';
import { isRetired, type LockedTaskRow, lockTask } from '../lease/index.js';
import { getApprovalRow } from './decide.js';
import { type ApprovalView, toApprovalView } from './views.js';

export interface RevokeInput {
  approvalId: string;
  comment: string;
}

/** Steps past this point have gone out (or may have): revoking can no longer stop the call. */
const EXECUTING = new Set(['STARTED', 'COMPLETED', 'FAILED', 'OUTCOME_UNKNOWN']);

export async function revokeApproval(
  ctx: EngineContext,
  actor: Actor,
  input: RevokeInput,
): Promise<ApprovalView> {
  if (actor.kind === 'WORKER')
    throw new EngineError(
      'FORBIDDEN',
      'A worker credential cannot revoke an approval; a person or an admin can.',
    );
  if (!input.comment?.trim())
    throw new EngineError(
      'COMMENT_REQUIRED',
      'Say why you revoke the approval: the agent reads your comment.',
    );
  const found = await getApprovalRow(ctx.db, actor, input.approvalId);
  const row = await ctx.db.transaction(async (tx) => {
    const task = await lockTask(tx, actor, found.taskId);
    const [a] = await tx.select().from(approvals).where(eq(approvals.id, found.id)).for('update');
    await assertMayRevoke(tx, actor, task, a);
    const [step] = await tx
      .select()
      .from(steps)
      .where(and(eq(steps.taskId, a.taskId), eq(steps.attempt, a.attempt), eq(steps.sequence, a.sequence)));
    if (step && EXECUTING.has(step.state)) {
      throw new EngineError(
        'ALREADY_EXECUTING',
        `The approved call (step ${a.sequence}) is already ${step.state}; it can no longer be revoked. Open an incident or act on the outcome instead.`,
        { stepState: step.state },
      );
    }
    return revoke(tx, actor, task, a, input.comment.trim());
  });
  return toApprovalView(ctx, row);
}

type ApprovalRow = typeof approvals.$inferSelect;

/** Who may revoke what: an admin any approval of the project; a person one they decided. */
async function assertMayRevoke(tx: Tx, actor: Actor, task: LockedTaskRow, a: ApprovalRow) {
  if (actor.kind !== 'ADMIN' && !(await hasDecided(tx, actor, a))) {
    throw new EngineError(
      'FORBIDDEN',
      'Only a person who decided this approval, or an admin, can revoke it.',
    );
  }
  if (isRetired(task))
    throw new EngineError('WORK_RETIRED', 'The work this approval was for was cancelled or suspended.');
  if (a.state !== 'PENDING' && a.state !== 'APPROVED') {
    throw new EngineError(
      'ALREADY_DECIDED',
      `The approval is ${a.state}; only a pending or approved call can be revoked.`,
      { state: a.state },
    );
  }
}

async function hasDecided(tx: Tx, actor: Actor, a: ApprovalRow): Promise<boolean> {
  const [decided] = await tx
    .select({ id: approvalDecisions.id })
    .from(approvalDecisions)
    .where(
      and(
        eq(approvalDecisions.approvalId, a.id),
        eq(approvalDecisions.principalId, actor.principalId),
        eq(approvalDecisions.outcome, 'ACCEPTED'),
      ),
    )
    .limit(1);
  return decided !== undefined;
}

function revoke(tx: Tx, actor: Actor, task: LockedTaskRow, a: ApprovalRow, comment: string) {
  // parked or taken but not started: either way the task goes back to be handed out on this attempt
  return withdrawApproval(tx, task, a, {
    state: 'REVOKED',
    comment,
    reason: `${a.state === 'APPROVED' ? 'Approval revoked' : 'Withdrawn'} by ${actor.name}: ${comment}`,
    actor: actorLabel(actor),
    data: { was: a.state, digest: a.digest },
  });
}
