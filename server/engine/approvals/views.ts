/** The approver's view of an approval: arguments as the evidence policy keeps them, earlier proposals, decisions. */
import { and, asc, eq, getTableColumns, inArray, isNotNull, ne, sql } from 'drizzle-orm';
import {
  approvalDecisions,
  approvals,
  externalTasks,
  processInstances,
  type ApprovalRow,
} from '../../db/schema.js';
import { bindingPolicy, redactArguments, renderTemplate, type ToolBinding } from '../definitions/index.js';
import { type Actor, type EngineContext, diffJson, type Change, isUuid } from '../common/index.js';
import { onApprovalSentence } from './basis.js';
import { type RuleRef, ruleAt } from './rules.js';

/**
 * Levels as people and integrators read them, counted from 1 (the API's `level`, webhook payloads,
 * history data); inside the engine and the database a level is a 0-based index into `levels`.
 */
export function levelNumber(index: number): number {
  return index + 1;
}

/** Each approval's frozen binding, process key and precondition binding (redacting facts), in one query. */
async function contextsOf(ctx: EngineContext, rows: Pick<ApprovalRow, 'taskId' | 'toolRef'>[]) {
  if (rows.length === 0) return [];
  const found = await ctx.db
    .select({ id: externalTasks.id, agentWork: externalTasks.agentWork, processKey: processInstances.key })
    .from(externalTasks)
    .innerJoin(processInstances, eq(processInstances.id, externalTasks.processInstanceId))
    .where(inArray(externalTasks.id, [...new Set(rows.map((a) => a.taskId))]));
  const byTask = new Map(found.map((t) => [t.id, t]));
  return rows.map((a) => {
    const t = byTask.get(a.taskId);
    const bindings = t?.agentWork?.toolBindings ?? [];
    const binding = bindings.find((b) => b.ref === a.toolRef);
    const pre = bindingPolicy(binding ?? {}).precondition;
    return {
      binding,
      factsBinding: pre ? bindings.find((b) => b.ref === pre.tool) : undefined,
      processKey: t?.processKey ?? '',
    };
  });
}

/**
 * An approval as the approver sees it: no sealed or bookkeeping columns, the arguments as the evidence
 * policy keeps them, the binding's editability, and the process it belongs to.
 */
function toView(ctx: EngineContext, a: ApprovalRow, { binding, factsBinding, processKey }: ApprovalContext) {
  const {
    argumentsEnc,
    proposedArgumentsEnc,
    factsEnc,
    keyId,
    escalatedAt,
    definitionVersion,
    ruleIndex,
    ...row
  } = a;
  const { view, redactedPaths } = shownArguments(ctx, binding, argumentsEnc);
  return {
    ...row,
    processKey,
    arguments: view,
    redactedPaths,
    editable: binding?.editable ?? false,
    onApproval: onApprovalSentence(binding, a),
    /** the precondition's answer when the call was proposed, as its tool's result redaction keeps it */
    facts: factsEnc
      ? redactArguments(ctx.sealer.openJson(factsEnc), bindingPolicy(factsBinding ?? {}).redactResult).view
      : null,
    ...readable(binding, a, view),
    /** the rule that asked for these levels, or approved the call by itself (null: the tool's approvers) */
    rule: ruleOf(binding, a),
  };
}

type ApprovalContext = Awaited<ReturnType<typeof contextsOf>>[number];
export type ApprovalView = ReturnType<typeof toView>;

export async function toApprovalView(ctx: EngineContext, a: ApprovalRow): Promise<ApprovalView> {
  return (await toApprovalViews(ctx, [a]))[0];
}

/** The approver's views of a page of approvals (one context query, not one per approval). */
export async function toApprovalViews(ctx: EngineContext, rows: ApprovalRow[]): Promise<ApprovalView[]> {
  const contexts = await contextsOf(ctx, rows);
  return rows.map((a, i) => toView(ctx, a, contexts[i]));
}

/** Whether an actor may see an approval: its project, and for humans one of its candidate groups (any level). */
export function maySeeApproval(
  actor: Actor,
  a: Pick<ApprovalRow, 'projectId' | 'levels' | 'candidateGroups'>,
): boolean {
  if (actor.projectId !== null && actor.projectId !== a.projectId) return false;
  if (actor.kind === 'ADMIN') return true;
  if (actor.kind !== 'HUMAN') return false;
  const groups = new Set([...a.candidateGroups, ...a.levels.flat()]);
  return actor.groups.some((g) => groups.has(g));
}

/** Loads an approval for an actor, or null when it does not exist or the actor may not see it. */
export async function loadApprovalFor(ctx: EngineContext, actor: Actor, id: string) {
  if (!isUuid(id)) return null;
  const [a] = await ctx.db.select().from(approvals).where(eq(approvals.id, id));
  if (!a || !maySeeApproval(actor, a)) return null;
  return toApprovalView(ctx, a);
}

const { approvalId, principalId, editedArgumentsEnc, chained, ...decisionColumns } =
  getTableColumns(approvalDecisions);

/** The decisions and refused attempts on an approval, oldest first. */
export function decisionsOf(ctx: EngineContext, id: string) {
  return ctx.db
    .select(decisionColumns)
    .from(approvalDecisions)
    .where(eq(approvalDecisions.approvalId, id))
    .orderBy(asc(approvalDecisions.createdAt));
}

export type DecisionView = Awaited<ReturnType<typeof decisionsOf>>[number];

/** Earlier proposals of the same call (same task and tool, earlier attempts or steps), with a diff against this one. */
export async function earlierProposals(ctx: EngineContext, a: ApprovalView) {
  const rows = await ctx.db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.taskId, a.taskId),
        eq(approvals.toolRef, a.toolRef),
        ne(approvals.id, a.id),
        sql`${approvals.createdAt} <= ${a.createdAt}`,
      ),
    )
    .orderBy(asc(approvals.createdAt));
  const binding = (await contextsOf(ctx, [a]))[0].binding;
  return rows.map((r) => ({
    approvalId: r.id,
    attempt: r.attempt,
    sequence: r.sequence,
    state: r.state,
    digest: r.digest,
    createdAt: r.createdAt,
    changes: diffJson(shownArguments(ctx, binding, r.argumentsEnc).view, a.arguments),
  }));
}

export type EarlierProposal = Awaited<ReturnType<typeof earlierProposals>>[number];

/**
 * What seed 001 §四.3 asks an approver to see besides the call (impact in words, whether it can be undone,
 * risk, until when an approval is valid), from the frozen binding (older bindings: their defaults).
 */
function readable(binding: ToolBinding | undefined, a: ApprovalRow, shownArgs: unknown) {
  const p = bindingPolicy(binding ?? {});
  const args = (shownArgs ?? {}) as Record<string, unknown>;
  const impact = p.impact === null ? null : renderTemplate(p.impact, args);
  const minutes = p.approvalValidMinutes;
  return {
    impact: impact === null ? null : typeof impact === 'string' ? impact : JSON.stringify(impact),
    reversible: p.reversible,
    risk: p.risk,
    validUntil:
      a.state === 'APPROVED' && a.decidedAt && minutes !== null
        ? new Date(a.decidedAt.getTime() + minutes * 60_000)
        : null,
  };
}

/** Sealed arguments as the evidence policy shows them (the binding's `redact` paths). */
function shownArguments(ctx: EngineContext, binding: ToolBinding | undefined, enc: string) {
  return redactArguments(ctx.sealer.openJson(enc) ?? {}, binding?.redact ?? []);
}

export function acceptedEdits(approvalId: string) {
  return and(
    eq(approvalDecisions.approvalId, approvalId),
    eq(approvalDecisions.outcome, 'ACCEPTED'),
    isNotNull(approvalDecisions.editedDigest),
  );
}

/** The rule of an approval: by its index; older rows kept only the rule's `when`. */
function ruleOf(binding: ToolBinding | undefined, a: ApprovalRow): RuleRef | null {
  if (a.ruleIndex !== null) return ruleAt(binding, a.ruleIndex);
  if (!a.rule) return null;
  const i = (binding?.approvalRules ?? []).findIndex((r) => r.when === a.rule && r.levels.length > 0);
  return i === -1 ? null : ruleAt(binding, i);
}

/**
 * The versions of the approval's call (SPEC §14.3): the agent's proposal, then each approval with changes,
 * who made it and what changed: what an approver of version v+1 needs to decide it afresh.
 */
export async function versionsOf(ctx: EngineContext, a: ApprovalView): Promise<ApprovalVersion[]> {
  const [{ binding }] = await contextsOf(ctx, [a]);
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
    .where(acceptedEdits(a.id))
    .orderBy(asc(approvalDecisions.createdAt));
  const [row] = await ctx.db
    .select({ proposedArgumentsEnc: approvals.proposedArgumentsEnc })
    .from(approvals)
    .where(eq(approvals.id, a.id));
  const shown = (enc: string | null) => (enc ? shownArguments(ctx, binding, enc).view : null);
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
