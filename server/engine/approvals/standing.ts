/**
 * Whether an approval still stands when its call starts (SPEC §11 "Bounded", seed 001 §五): first the
 * validity window after approval (`approval_valid_minutes`), then the authority of each person who decided
 * it (still enabled, still in the level's group). A lapse expires or voids it and opens a new version of
 * the same call (same digest) at once for people to decide, the model not asked again; an `auto` rule
 * approves its new version again (APPROVAL_AUTO). Found when the call starts (journal/reopen.ts), or by a
 * revoke after the window (reopenLapsed).
 */
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { HistoryEntry } from '../../db/rows.js';
import { approvalDecisions, approvals, principals, steps, type ApprovalRow } from '../../db/schema.js';
import type { Executor } from '../common/index.js';
import { bindingPolicy, type ToolBinding } from '../definitions/index.js';
import { notify } from '../events/index.js';
import { appendHistory } from '../history/index.js';
import { attemptHistory, type LockedTaskRow } from '../lease/index.js';
import { approvalOpened, autoHistory, isAutoApproval, parkForApproval, timeBounds } from './propose.js';
import { approvalHistoryBase } from './withdraw.js';
import { ruleAt } from './rules.js';
import { stepOf } from './withdraw.js';

/** Who decided which level of the approval's current version (accepted decisions only, SPEC §14.3). */
export async function versionDeciders(ex: Executor, a: ApprovalRow) {
  const rows = await ex
    .select({
      level: approvalDecisions.level,
      principalId: approvalDecisions.principalId,
      name: approvalDecisions.principalName,
    })
    .from(approvalDecisions)
    .where(
      and(
        eq(approvalDecisions.approvalId, a.id),
        eq(approvalDecisions.outcome, 'ACCEPTED'),
        eq(approvalDecisions.version, a.proposalVersion),
        isNotNull(approvalDecisions.level),
      ),
    );
  return rows as { level: number; principalId: string; name: string }[];
}

export type VersionDecider = Awaited<ReturnType<typeof versionDeciders>>[number];

/** An approval and the people whose accepted decisions it rests on, as they stand now. */
export async function approvalStanding(ex: Executor, approvalId: string) {
  const [approval] = await ex.select().from(approvals).where(eq(approvals.id, approvalId));
  if (!approval) return null;
  const rows = await versionDeciders(ex, approval);
  const ids = rows.map((r) => r.principalId);
  const people =
    ids.length === 0
      ? []
      : await ex
          .select({ id: principals.id, groups: principals.groups, disabledAt: principals.disabledAt })
          .from(principals)
          .where(inArray(principals.id, ids));
  const byId = new Map(people.map((p) => [p.id, p]));
  return {
    approval,
    deciders: rows.map((r) => {
      const p = byId.get(r.principalId);
      return { level: r.level, name: r.name, enabled: !!p && p.disabledAt === null, groups: p?.groups ?? [] };
    }),
  };
}

export type Standing = NonNullable<Awaited<ReturnType<typeof approvalStanding>>>;

/** Why an approval no longer stands, and what the starting call is told. */
export interface Lapse {
  state: 'EXPIRED' | 'VOIDED';
  voidReason: 'AUTHORITY' | 'PRECONDITION' | null;
  code: 'APPROVAL_EXPIRED' | 'APPROVAL_REQUIRED' | 'PRECONDITION_FAILED';
  message: string;
  details: Record<string, unknown>;
}

/** The first lapse of an approved call's approval at `now`, or null when it stands. */
export function lapseOf(s: Standing, binding: ToolBinding | undefined, now: Date): Lapse | null {
  const a = s.approval;
  const minutes = bindingPolicy(binding ?? {}).approvalValidMinutes;
  if (minutes !== null && a.decidedAt && a.decidedAt.getTime() + minutes * 60_000 < now.getTime()) {
    const until = new Date(a.decidedAt.getTime() + minutes * 60_000).toISOString();
    return {
      state: 'EXPIRED',
      voidReason: null,
      code: 'APPROVAL_EXPIRED',
      message: `The approval of step ${a.sequence} was valid until ${until} (${minutes} minutes after approval). A new approval of the same call was asked; let the task go — it comes back when a person decides.`,
      details: { validUntil: until },
    };
  }
  const lost = s.deciders.filter(
    (d) => !d.enabled || !d.groups.some((g) => (a.levels[d.level] ?? []).includes(g)),
  );
  if (lost.length === 0) return null;
  const why = lost.map((d) =>
    d.enabled
      ? `${d.name} is no longer in ${(a.levels[d.level] ?? []).join(' or ')}`
      : `${d.name} was disabled`,
  );
  return {
    state: 'VOIDED',
    voidReason: 'AUTHORITY',
    code: 'APPROVAL_REQUIRED',
    message: `The approval of step ${a.sequence} no longer stands: ${why.join('; ')}. A new approval of the same call was asked; let the task go.`,
    details: { reason: 'AUTHORITY_LAPSED', lapsed: lost.map((d) => d.name) },
  };
}

/** The history row of the lapse: APPROVAL_EXPIRED or APPROVAL_VOIDED. */
export function lapseHistory(a: ApprovalRow, lapse: Lapse): HistoryEntry {
  return {
    ...approvalHistoryBase(a, 'engine'),
    eventType: `APPROVAL_${lapse.state}`,
    data: { digest: a.digest, voidReason: lapse.voidReason ?? undefined, ...lapse.details },
  };
}

/** A lapsed approval's new version; `sequence`: the step's in the current attempt, not the old approval's. */
type Reopening = { task: LockedTaskRow; old: ApprovalRow; newId: string; lapse: Lapse; sequence: number };

/**
 * Writes the lapse (after the journal wrote the step back to PROPOSED under `newId`): the old approval
 * EXPIRED or VOIDED, a new PENDING version of the same call for the first level, the task parked.
 */
export async function reopenApproval(ex: Executor, p: Reopening & { binding: ToolBinding | undefined }) {
  const { task, old, newId, lapse } = p;
  await ex
    .update(approvals)
    .set({ state: lapse.state, voidReason: lapse.voidReason })
    .where(eq(approvals.id, old.id));
  await ex.insert(approvals).values({
    id: newId,
    projectId: old.projectId,
    processInstanceId: old.processInstanceId,
    taskId: task.id,
    attempt: task.attempt,
    sequence: p.sequence,
    nodeId: old.nodeId,
    toolRef: old.toolRef,
    model: old.model,
    state: 'PENDING',
    digest: old.digest,
    argumentsEnc: old.argumentsEnc,
    factsEnc: old.factsEnc,
    toolDescription: old.toolDescription,
    keyId: old.keyId,
    candidateGroups: old.levels[0],
    levels: old.levels,
    proposalVersion: old.proposalVersion + 1,
    rule: old.rule,
    definitionVersion: old.definitionVersion,
    ...timeBounds(p.binding),
  });
  const change = lapse.state === 'EXPIRED' ? 'expired' : 'voided';
  await notify(ex, { type: 'approval', approvalId: old.id, projectId: old.projectId, change });
  await parkForApproval(ex, task, newId);
}

/** An approval whose precondition failed as its call started: VOIDED (and the event). */
export async function voidApproval(ex: Executor, a: ApprovalRow, comment: string): Promise<void> {
  await ex
    .update(approvals)
    .set({ state: 'VOIDED', voidReason: 'PRECONDITION', comment })
    .where(eq(approvals.id, a.id));
  await notify(ex, { type: 'approval', approvalId: a.id, projectId: a.projectId, change: 'voided' });
}

/**
 * The effect of an auto approval's lapse (after the journal wrote the step under `newId`): the old
 * approval EXPIRED, a new version APPROVED by the same rule now, and the event.
 */
export async function reapproveByRule(ex: Executor, p: Reopening) {
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
 * A revoke found the approved call's window lapsed: the lapse is written as the start would have (old
 * approval EXPIRED, a new version, the step, the history); the caller then refuses APPROVAL_EXPIRED.
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
      lapseHistory(old, lapse),
      ...autoHistory(owner, step, rule, old.proposalVersion + 1, old.definitionVersion, newId),
    );
    return;
  }
  await ex.update(steps).set({ state: 'PROPOSED', approvalId: newId, updatedAt: sql`now()` }).where(where);
  await appendHistory(
    ex,
    lapseHistory(old, lapse),
    approvalOpened(owner, step, { ref: old.toolRef }, old.levels, newId),
    {
      ...attemptHistory(owner, p.actor),
      sequence: step.sequence,
      eventType: 'STEP_PROPOSED',
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
