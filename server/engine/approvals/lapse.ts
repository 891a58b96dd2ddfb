/**
 * An approval whose window lapsed before its call started opens a new version of the same call
 * (SPEC §11, §14.1, §14.4): for people, PENDING again with the step back to PROPOSED and the task
 * parked; approved by an `auto` rule, approved again by that rule at once (APPROVAL_AUTO). The journal
 * finds a lapse when the call starts (journal/reopen.ts); a revoke after the window finds it here.
 */
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { approvals, steps, type ApprovalRow } from '../../db/schema.js';
import type { Executor } from '../common/index.js';
import type { ToolBinding } from '../definitions/index.js';
import { notify } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import type { LockedTaskRow } from '../lease/index.js';
import { approvalOpened, autoHistory, isAutoApproval, taskStepBase } from './propose.js';
import { ruleAt } from './rules.js';
import { type Lapse, lapseHistory, reopenApproval } from './standing.js';
import { stepOf } from './withdraw.js';

/**
 * The effect of an auto approval's lapse (after the journal wrote the step under `newId`): the old
 * approval EXPIRED, a new version APPROVED by the same rule now, and the event.
 */
export async function reapproveByRule(
  ex: Executor,
  p: { task: LockedTaskRow; old: ApprovalRow; newId: string; lapse: Lapse; sequence: number },
): Promise<void> {
  const { task, old, newId } = p;
  await ex.update(approvals).set({ state: p.lapse.state }).where(eq(approvals.id, old.id));
  await ex.insert(approvals).values({
    ...old,
    id: newId,
    taskId: task.id,
    attempt: task.attempt,
    sequence: p.sequence,
    state: 'APPROVED',
    proposalVersion: old.proposalVersion + 1,
    decidedAt: sql`now()`,
    proposedArgumentsEnc: old.argumentsEnc,
    escalated: false,
    escalatedAt: null,
    comment: null,
    voidReason: null,
    createdAt: sql`now()`,
  });
  await notify(ex, { type: 'approval', approvalId: old.id, projectId: old.projectId, change: 'expired' });
  await notify(ex, { type: 'approval', approvalId: newId, projectId: old.projectId, change: 'decided' });
}

/**
 * A revoke found the approved call's window lapsed: the lapse is written as the start would have
 * written it — the old approval EXPIRED, a new version, the step and the history — and the revoke is
 * then refused APPROVAL_EXPIRED by the caller.
 */
export async function reopenLapsed(
  ex: Executor,
  p: { task: LockedTaskRow; old: ApprovalRow; lapse: Lapse; binding: ToolBinding | undefined; actor: string },
): Promise<void> {
  const { task, old, lapse, binding } = p;
  const [step] = await ex.select().from(steps).where(stepOf(old));
  if (step?.state !== 'APPROVED') return;
  const newId = randomUUID();
  const rule = isAutoApproval(old) ? ruleAt(binding, old.ruleIndex) : null;
  const where = stepOf(step);
  const owner = { ...task, attempt: step.attempt };
  if (rule) {
    await ex.update(steps).set({ approvalId: newId, updatedAt: sql`now()` }).where(where);
    await reapproveByRule(ex, { task: owner, old, newId, lapse, sequence: step.sequence });
    await appendHistory(
      ex,
      lapseHistory(task, old, lapse),
      ...autoHistory(owner, step, rule, old.proposalVersion + 1, old.definitionVersion, newId),
    );
    return;
  }
  await ex.update(steps).set({ state: 'PROPOSED', approvalId: newId, updatedAt: sql`now()` }).where(where);
  await appendHistory(
    ex,
    lapseHistory(task, old, lapse),
    approvalOpened(owner, step, { ref: old.toolRef }, old.levels, newId),
    {
      ...taskStepBase(owner, step.sequence),
      eventType: 'STEP_PROPOSED',
      actor: p.actor,
      data: {
        kind: step.kind,
        toolRef: step.toolRef,
        digest: step.digest,
        approvalId: newId,
        version: old.proposalVersion + 1,
      },
    },
  );
  await reopenApproval(ex, { task: owner, old, newId, lapse, binding, sequence: step.sequence });
}
