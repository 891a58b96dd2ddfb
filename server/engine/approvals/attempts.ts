/**
 * Every attempt to decide or revoke an approval is kept (SPEC §14.5): the accepted decision with its
 * evidence, and each refused attempt in approval_decisions. A refusal with one of the codes below also
 * joins the chain as APPROVAL_DECISION_REFUSED — at most one row per actor, approval and code a minute;
 * the refusals in between are counted (`suppressed`) on the next row, so a script hammering the API
 * cannot flood the chain, and nothing it tried is lost.
 */
import { createHash } from 'node:crypto';
import { and, count, desc, eq, gt, sql } from 'drizzle-orm';
import { approvalDecisions, type ApprovalRow } from '../../db/schema.js';
import type { ErrorCode } from '../../errors.js';
import type { Actor, Tx } from '../common/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import type { ToolBinding } from '../definitions/index.js';
import { levelNumber } from './views.js';
import { approvalHistoryBase } from './withdraw.js';
import { ruleAt, ruleRecord } from './rules.js';

/** Refusals that are evidence in the chain (the others are a malformed request: nothing is written). */
export const CHAINED_REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'FORBIDDEN',
  'SEPARATION_OF_DUTIES',
  'STALE_DIGEST',
  'ALREADY_DECIDED',
  'APPROVAL_EXPIRED',
  'INVALID_ARGUMENTS',
  'POLICY_DENIED',
  'WORK_RETIRED',
]);

const WINDOW = sql`now() - interval '1 minute'`;

export interface RefusedAttempt {
  action: 'DECIDE' | 'REVOKE';
  code: ErrorCode;
  decision: 'APPROVE' | 'REJECT' | null;
  /** the digest the actor sent (a revoke sends none: the approval's) */
  digest: string;
  comment: string | null;
}

/** Records a refused attempt; chains it unless the same actor had the same refusal chained within a minute. */
export async function recordRefusal(tx: Tx, actor: Actor, a: ApprovalRow, r: RefusedAttempt): Promise<void> {
  const same = and(
    eq(approvalDecisions.approvalId, a.id),
    eq(approvalDecisions.principalId, actor.principalId),
    eq(approvalDecisions.outcome, r.code),
    eq(approvalDecisions.action, r.action),
  );
  const [last] = await tx
    .select({
      createdAt: approvalDecisions.createdAt,
      recent: sql<boolean>`${approvalDecisions.createdAt} > ${WINDOW}`,
    })
    .from(approvalDecisions)
    .where(and(same, eq(approvalDecisions.chained, true)))
    .orderBy(desc(approvalDecisions.createdAt))
    .limit(1);
  const chained = CHAINED_REFUSALS.has(r.code) && !last?.recent;
  const [{ suppressed }] =
    chained && last
      ? await tx
          .select({ suppressed: count() })
          .from(approvalDecisions)
          .where(
            and(same, eq(approvalDecisions.chained, false), gt(approvalDecisions.createdAt, last.createdAt)),
          )
      : [{ suppressed: 0 }];
  await tx.insert(approvalDecisions).values({
    approvalId: a.id,
    level: a.currentLevel,
    version: a.proposalVersion,
    principalId: actor.principalId,
    principalName: actor.name,
    decision: r.decision ?? 'REJECT',
    digest: r.digest,
    comment: r.comment,
    outcome: r.code,
    action: r.action,
    chained,
    definitionVersion: a.definitionVersion,
    rule: a.rule,
    groups: actor.groups,
  });
  if (!chained) return;
  await appendHistory(tx, {
    ...approvalHistoryBase(a, actorLabel(actor)),
    eventType: 'APPROVAL_DECISION_REFUSED',
    data: {
      code: r.code,
      action: r.action,
      decision: r.decision ?? undefined,
      digest: r.digest,
      version: a.proposalVersion,
      level: levelNumber(a.currentLevel),
      suppressed: suppressed > 0 ? suppressed : undefined,
    },
  });
}

/** SHA-256 of a decision's comment: the comment stays outside the chain, its digest goes in. */
export function commentDigest(comment: string | null | undefined): string | undefined {
  return comment ? createHash('sha256').update(comment, 'utf8').digest('hex') : undefined;
}

/**
 * What the history row of an accepted decision carries (SPEC §14.6): the version and level, the
 * decision, the digest decided (and the one the person saw), the person's groups then, the rule, the
 * definition version and the comment's digest.
 */
export function decisionEvidence(e: {
  actor: Actor;
  a: ApprovalRow;
  version: number;
  level: number | null;
  of: number;
  decision: 'APPROVE' | 'REJECT';
  digest: string;
  decidedOn: string;
  editedFrom?: { version: number; digest: string };
  rule: Record<string, unknown> | null;
  comment: string | null | undefined;
}): Record<string, unknown> {
  return {
    version: e.version,
    level: e.level === null ? null : levelNumber(e.level),
    of: e.of,
    decision: e.decision,
    digest: e.digest,
    decidedOn: e.decidedOn,
    editedFrom: e.editedFrom,
    groups: [...e.actor.groups].sort(),
    rule: e.rule,
    definitionVersion: e.a.definitionVersion,
    commentSha256: commentDigest(e.comment),
  };
}

/** The rule an approval's levels came from, as history keeps it (older rows: its `when` only). */
export function approvalRule(
  binding: ToolBinding | undefined,
  a: Pick<ApprovalRow, 'rule' | 'ruleIndex'>,
): Record<string, unknown> | null {
  return ruleRecord(ruleAt(binding, a.ruleIndex)) ?? (a.rule ? { when: a.rule } : null);
}
