/**
 * The versions of one approval's call (SPEC §14.3): the call as the agent proposed it, then each
 * approval with changes, with who made it and what it changed — what an approver of version v+1 needs
 * to see to decide it afresh. Arguments as the evidence policy shows them.
 */
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { approvalDecisions, approvals } from '../../db/schema.js';
import { type Change, diffJson, type EngineContext } from '../common/index.js';
import { redactArguments, type ToolBinding } from '../definitions/index.js';

export interface ApprovalVersion {
  version: number;
  digest: string;
  /** as the evidence policy shows them; null when an older row kept no copy */
  arguments: unknown;
  /** who made this version with an approval with changes (null: the agent's proposal) */
  editedBy: string | null;
  /** what differs from the version before */
  changes: Change[];
  createdAt: Date;
}

export async function approvalVersions(
  ctx: EngineContext,
  a: { id: string; proposalVersion: number; digest: string; arguments: unknown; createdAt: Date },
  binding: ToolBinding | undefined,
): Promise<ApprovalVersion[]> {
  const edits = await ctx.db
    .select({
      name: approvalDecisions.principalName,
      version: approvalDecisions.version,
      from: approvalDecisions.digest,
      digest: approvalDecisions.editedDigest,
      argumentsEnc: approvalDecisions.editedArgumentsEnc,
      createdAt: approvalDecisions.createdAt,
    })
    .from(approvalDecisions)
    .where(
      and(
        eq(approvalDecisions.approvalId, a.id),
        eq(approvalDecisions.outcome, 'ACCEPTED'),
        isNotNull(approvalDecisions.editedDigest),
      ),
    )
    .orderBy(asc(approvalDecisions.createdAt));
  const [row] = await ctx.db
    .select({ proposedArgumentsEnc: approvals.proposedArgumentsEnc })
    .from(approvals)
    .where(eq(approvals.id, a.id));
  const shown = (enc: string | null) =>
    enc ? redactArguments(ctx.sealer.openJson(enc) ?? {}, binding?.redact ?? []).view : null;
  const first: ApprovalVersion = {
    version: a.proposalVersion - edits.length,
    digest: edits[0]?.from ?? a.digest,
    arguments: edits.length === 0 ? a.arguments : shown(row?.proposedArgumentsEnc ?? null),
    editedBy: null,
    changes: [],
    createdAt: a.createdAt,
  };
  const out = [first];
  for (const e of edits) {
    const before = out[out.length - 1].arguments;
    const args = shown(e.argumentsEnc);
    out.push({
      version: e.version,
      digest: e.digest!,
      arguments: args,
      editedBy: e.name,
      changes: before === null || args === null ? [] : diffJson(before, args),
      createdAt: e.createdAt,
    });
  }
  return out;
}
