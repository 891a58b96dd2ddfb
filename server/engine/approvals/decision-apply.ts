/**
 * The apply half of deciding an approval, once decision-check.ts accepted it: a level approved moves
 * the approval to the next level; a final decision settles the approval and its step and makes the task
 * acquirable again on the same attempt. Never moves the token.
 */
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import {
  approvalDecisions,
  approvals,
  externalTasks,
  steps,
  type ApprovalRow,
  type StepRow,
} from '../../db/schema.js';
import { type Actor, type EngineContext, type Tx, describeChanges } from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import type { LockedTaskRow } from '../lease/index.js';
import type { DecideInput, Edit } from './decision-check.js';
import { levelNumber } from './views.js';
import { approvalHistoryBase } from './withdraw.js';

interface Decided {
  ctx: EngineContext;
  actor: Actor;
  task: LockedTaskRow;
  a: ApprovalRow;
  step: StepRow;
  input: DecideInput;
  edit: Edit | null;
}

/** Applies an accepted decision and returns the approval as it now stands. */
export async function applyDecision(tx: Tx, d: Decided): Promise<ApprovalRow> {
  const lastLevel = d.a.currentLevel >= d.a.levels.length - 1;
  const final = d.input.decision === 'REJECT' || lastLevel;
  const row = final ? await settle(tx, d) : await approveLevel(tx, d);
  await notify(tx, { type: 'approval', approvalId: d.a.id, projectId: d.a.projectId, change: 'decided' });
  if (final) await notifyTask(tx, d.task, 'OPEN');
  return row;
}

function historyBase({ a, actor }: Decided) {
  return approvalHistoryBase(a, actorLabel(actor));
}

/** The approval's new proposal when the approver edited it: digest, sealed arguments, next version. */
function editedFields({ ctx, a, edit }: Decided) {
  return edit
    ? {
        digest: edit.digest,
        argumentsEnc: ctx.sealer.sealJson(edit.args),
        proposalVersion: a.proposalVersion + 1,
      }
    : {};
}

/** A level of several approved: the next level's groups decide, on the same (possibly edited) digest. */
async function approveLevel(tx: Tx, d: Decided): Promise<ApprovalRow> {
  const { a, edit } = d;
  const [row] = await tx
    .update(approvals)
    .set({
      ...editedFields(d),
      currentLevel: a.currentLevel + 1,
      candidateGroups: a.levels[a.currentLevel + 1],
    })
    .where(eq(approvals.id, a.id))
    .returning();
  await appendHistory(tx, {
    ...historyBase(d),
    eventType: 'APPROVAL_LEVEL_APPROVED',
    data: {
      level: levelNumber(a.currentLevel),
      of: a.levels.length,
      digest: edit?.digest ?? a.digest,
      editedFrom: edit ? a.digest : undefined,
    },
  });
  return row;
}

/** The final decision: the approval and its step are APPROVED or REJECTED, the task OPEN again. */
async function settle(tx: Tx, d: Decided): Promise<ApprovalRow> {
  const { actor, task, a, input, edit } = d;
  const approved = input.decision === 'APPROVE';
  const digest = edit?.digest ?? a.digest;
  const [row] = await tx
    .update(approvals)
    .set({
      ...editedFields(d),
      state: approved ? 'APPROVED' : 'REJECTED',
      decidedById: actor.principalId,
      decidedByName: actor.name,
      decidedAt: sql`now()`,
      comment: input.comment ?? null,
    })
    .where(eq(approvals.id, a.id))
    .returning();
  await settleStep(tx, d, approved, digest);
  // The decision does not move the token; it only makes the task acquirable again on the same attempt.
  await tx
    .update(externalTasks)
    .set({ state: 'OPEN', workerId: null, availableAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(externalTasks.id, task.id), eq(externalTasks.state, 'AWAITING_APPROVAL')));
  await appendHistory(tx, {
    ...historyBase(d),
    eventType: approved ? 'APPROVAL_APPROVED' : 'APPROVAL_REJECTED',
    data: {
      digest,
      decidedOn: input.digest,
      edited: edit ? true : undefined,
      level: levelNumber(a.currentLevel),
    },
  });
  await appendHistory(tx, {
    ...historyBase(d),
    eventType: approved ? 'STEP_APPROVED' : 'STEP_REJECTED',
    data: { digest },
  });
  return row;
}

/**
 * The step takes the decision. Edits made at this level or an earlier one (the approval's digest moved
 * away from the step's): the step carries the arguments that were approved, and the model is told what
 * changed and by whom.
 */
async function settleStep(tx: Tx, d: Decided, approved: boolean, digest: string): Promise<void> {
  const { ctx, a, step, input, edit } = d;
  const request = ctx.sealer.openJson<Record<string, unknown>>(step.requestEnc) ?? {};
  const finalArgs =
    approved && digest !== step.digest
      ? (edit?.args ?? ctx.sealer.openJson<Record<string, unknown>>(a.argumentsEnc) ?? {})
      : null;
  let note: string | null = null;
  if (finalArgs) {
    const editors = await tx
      .selectDistinct({ name: approvalDecisions.principalName })
      .from(approvalDecisions)
      .where(
        and(
          eq(approvalDecisions.approvalId, a.id),
          eq(approvalDecisions.outcome, 'ACCEPTED'),
          isNotNull(approvalDecisions.editedDigest),
        ),
      );
    note = `Approved with changes by ${editors.map((e) => e.name).join(', ')}: ${describeChanges(request.arguments, finalArgs)}`;
  }
  await tx
    .update(steps)
    .set({
      state: approved ? 'APPROVED' : 'REJECTED',
      comment: note ?? input.comment ?? null,
      ...(finalArgs ? { digest, requestEnc: ctx.sealer.sealJson({ ...request, arguments: finalArgs }) } : {}),
      updatedAt: sql`now()`,
    })
    .where(
      and(eq(steps.taskId, step.taskId), eq(steps.attempt, step.attempt), eq(steps.sequence, step.sequence)),
    );
}
