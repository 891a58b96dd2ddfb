/**
 * The apply half of deciding an approval, once decision-check.ts accepted it. An approval with changes
 * makes version v+1 whose levels start afresh (the editor's decision counts for one, SPEC §14.3). An
 * approved level moves on to its version's first undecided level; the last, or a rejection, settles the
 * approval and its step and makes the task acquirable again on the same attempt. Never moves the token.
 */
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { approvalDecisions, approvals, externalTasks, steps, type ApprovalRow } from '../../db/schema.js';
import { type Tx, describeChanges } from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import type { Accepted, Deciding } from './decision-check.js';
import { ruleAt, ruleRecord } from './rules.js';
import { acceptedEdits, levelNumber } from './views.js';
import { approvalHistoryBase, stepOf } from './withdraw.js';

type Decided = Deciding & Accepted;

/**
 * What the decision makes of the approval: its version and levels, the level the decision counts for
 * (null: none), the first level of the version still undecided after it (-1: none), and whether it is final.
 */
function standingAfter(d: Decided) {
  const { a, edit } = d;
  const version = edit ? edit.version : a.proposalVersion;
  const levels = edit ? edit.levels : a.levels;
  const level = edit ? edit.level : a.currentLevel;
  const decided = new Set(edit ? [] : d.deciders.map((x) => x.level));
  if (level !== null) decided.add(level);
  const next = levels.findIndex((_, i) => !decided.has(i));
  return { version, levels, level, next, final: d.input.decision === 'REJECT' || next === -1 };
}

type Standing = ReturnType<typeof standingAfter>;

/** Records an accepted decision, applies it, and returns the approval as it now stands. */
export async function applyDecision(tx: Tx, d: Decided): Promise<ApprovalRow> {
  const { ctx, actor, a, input, edit } = d;
  const s = standingAfter(d);
  await tx.insert(approvalDecisions).values({
    approvalId: a.id,
    level: s.level,
    version: s.version,
    principalId: actor.principalId,
    principalName: actor.name,
    decision: input.decision,
    digest: input.digest,
    comment: input.comment ?? null,
    editedDigest: edit?.digest ?? null,
    editedArgumentsEnc: edit ? ctx.sealer.sealJson(edit.args) : null,
    outcome: 'ACCEPTED',
    definitionVersion: a.definitionVersion,
    rule: edit ? (edit.rule?.when ?? null) : a.rule,
    groups: actor.groups,
  });
  const row = s.final ? await settle(tx, d, s) : await advance(tx, d, s);
  await notify(tx, { type: 'approval', approvalId: a.id, projectId: a.projectId, change: 'decided' });
  if (s.final) await notifyTask(tx, d.task, 'OPEN');
  return row;
}

function editedFields({ ctx, edit }: Decided) {
  return edit
    ? {
        digest: edit.digest,
        argumentsEnc: ctx.sealer.sealJson(edit.args),
        proposalVersion: edit.version,
        levels: edit.levels,
        rule: edit.rule?.when ?? null,
        ruleIndex: edit.rule?.index ?? null,
      }
    : {};
}

/**
 * The history row of the decision with its evidence (SPEC §14.6): the version and level, the decision,
 * the digest decided (and the one the person saw), the person's groups then, the rule, the definition
 * version, and the SHA-256 of the comment (the comment stays outside the chain, its digest goes in).
 */
function evidenceRow(d: Decided, s: Standing, eventType: string) {
  const { a, actor, input, edit, task } = d;
  const binding = task.agentWork?.toolBindings.find((b) => b.ref === a.toolRef);
  // older approvals kept only their rule's `when`
  const rule = ruleRecord(ruleAt(binding, a.ruleIndex)) ?? (a.rule ? { when: a.rule } : null);
  return {
    ...approvalHistoryBase(a, actorLabel(actor)),
    eventType,
    data: {
      version: s.version,
      level: s.level === null ? null : levelNumber(s.level),
      of: s.levels.length,
      decision: input.decision,
      digest: edit?.digest ?? a.digest,
      decidedOn: input.digest,
      editedFrom: edit ? { version: a.proposalVersion, digest: a.digest } : undefined,
      groups: [...actor.groups].sort(),
      rule: edit ? ruleRecord(edit.rule) : rule,
      definitionVersion: a.definitionVersion,
      commentSha256: input.comment
        ? createHash('sha256').update(input.comment, 'utf8').digest('hex')
        : undefined,
    },
  };
}

/** Levels remain: the first undecided level of the (possibly new) version decides next, on its digest. */
async function advance(tx: Tx, d: Decided, s: Standing): Promise<ApprovalRow> {
  const [row] = await tx
    .update(approvals)
    .set({ ...editedFields(d), currentLevel: s.next, candidateGroups: s.levels[s.next] })
    .where(eq(approvals.id, d.a.id))
    .returning();
  // an approval with changes that counts for no level of its new version only made that version
  await appendHistory(
    tx,
    evidenceRow(d, s, s.level === null ? 'APPROVAL_EDITED' : 'APPROVAL_LEVEL_APPROVED'),
  );
  return row;
}

/** The final decision: the approval and its step are APPROVED or REJECTED, the task OPEN again. */
async function settle(tx: Tx, d: Decided, s: Standing): Promise<ApprovalRow> {
  const { actor, task, a, input, edit } = d;
  const approved = input.decision === 'APPROVE';
  const digest = edit?.digest ?? a.digest;
  const [row] = await tx
    .update(approvals)
    .set({
      ...editedFields(d),
      ...(s.level !== null ? { currentLevel: s.level } : {}),
      state: approved ? 'APPROVED' : 'REJECTED',
      decidedById: actor.principalId,
      decidedByName: actor.name,
      decidedAt: sql`now()`,
      comment: input.comment ?? null,
    })
    .where(eq(approvals.id, a.id))
    .returning();
  await settleStep(tx, d, approved, digest);
  await tx
    .update(externalTasks)
    .set({ state: 'OPEN', workerId: null, availableAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(externalTasks.id, task.id), eq(externalTasks.state, 'AWAITING_APPROVAL')));
  await appendHistory(tx, evidenceRow(d, s, approved ? 'APPROVAL_APPROVED' : 'APPROVAL_REJECTED'), {
    ...approvalHistoryBase(a, actorLabel(actor)),
    eventType: approved ? 'STEP_APPROVED' : 'STEP_REJECTED',
    data: { digest },
  });
  return row;
}

/**
 * The step takes the decision. Edited at this level or an earlier one (the approval's digest moved from
 * the step's): the step carries the approved arguments, and the model is told what changed and by whom.
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
      .where(acceptedEdits(a.id));
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
    .where(stepOf(step));
}
