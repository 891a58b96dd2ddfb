/**
 * Every attempt to decide or revoke an approval is kept (SPEC §14.5): the accepted decision with its
 * evidence, each refused one in approval_decisions. A refusal also joins the chain as
 * APPROVAL_DECISION_REFUSED at most once per actor, approval and code a minute, the ones between counted
 * (`suppressed`) on the next row: a script hammering the API cannot flood the chain, and nothing is lost.
 */
import { and, count, desc, eq, gt, sql } from 'drizzle-orm';
import { approvalDecisions, type ApprovalRow } from '../../db/schema.js';
import type { ErrorCode } from '../../errors.js';
import type { Actor, Tx } from '../common/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import { levelNumber } from './views.js';
import { approvalHistoryBase } from './withdraw.js';

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
      recent: sql<boolean>`${approvalDecisions.createdAt} > now() - interval '1 minute'`,
    })
    .from(approvalDecisions)
    .where(and(same, eq(approvalDecisions.chained, true)))
    .orderBy(desc(approvalDecisions.createdAt))
    .limit(1);
  const chained = !last?.recent;
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
