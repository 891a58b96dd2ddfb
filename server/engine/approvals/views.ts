/** The approver's view of an approval: arguments as the evidence policy keeps them, earlier proposals, decisions. */
import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
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
import { type ApprovalVersion, approvalVersions } from './versions.js';
import { maySeeApproval } from './visibility.js';

/**
 * An approval as the approver sees it: the arguments as the evidence policy keeps them (never sealed),
 * the binding's editability, and the process it belongs to.
 */
export interface ApprovalView {
  id: string;
  projectId: string;
  processInstanceId: string;
  /** the key of the process the instance runs */
  processKey: string;
  taskId: string;
  attempt: number;
  sequence: number;
  nodeId: string;
  toolRef: string;
  model: string | null;
  state: ApprovalRow['state'];
  digest: string;
  arguments: unknown;
  redactedPaths: string[];
  editable: boolean;
  proposalVersion: number;
  candidateGroups: string[];
  /** the groups of each level, in order */
  levels: string[][];
  /** the level deciding now, 0-based (an index into `levels`); people read `levelNumber(currentLevel)` */
  currentLevel: number;
  slaDueAt: Date | null;
  escalated: boolean;
  /** the principal who made the final decision, and their name as the API shows it (`decidedBy`) */
  decidedById: string | null;
  decidedByName: string | null;
  decidedAt: Date | null;
  comment: string | null;
  /** what happens when it is approved, in one sentence */
  onApproval: string;
  /** the binding's `impact` rendered from the arguments as the approver sees them (null: none declared) */
  impact: string | null;
  reversible: boolean;
  risk: 'low' | 'medium' | 'high';
  /** a pending approval with no decision by then expires (null: no timeout) */
  expiresAt: Date | null;
  /** an approved call must start by then (null: not approved, or a binding without a window) */
  validUntil: Date | null;
  voidReason: ApprovalRow['voidReason'];
  /** the tool server's own description of the tool (the worker sent it with the proposal) */
  toolDescription: string | null;
  /** the precondition's answer when the call was proposed, as its tool's result redaction keeps it */
  facts: unknown;
  /** the rule that asked for these levels, or approved the call by itself (null: the tool's approvers) */
  rule: RuleRef | null;
  createdAt: Date;
}

/**
 * Levels as people and integrators read them, counted from 1 (the API's `level`, webhook payloads,
 * history data); inside the engine and the database a level is a 0-based index into `levels`.
 */
export function levelNumber(index: number): number {
  return index + 1;
}

export interface DecisionView {
  id: string;
  /** the level the decision counts for, 0-based like ApprovalView.currentLevel (null: none) */
  level: number | null;
  /** the version of the call it is on (an approval with changes: the version it made) */
  version: number;
  /** DECIDE or REVOKE */
  action: string;
  principalName: string;
  decision: string;
  digest: string;
  editedDigest: string | null;
  comment: string | null;
  outcome: string;
  createdAt: Date;
  /** the policy it was made under: definition version, the rule whose levels applied, the person's groups */
  definitionVersion: number | null;
  rule: string | null;
  groups: string[] | null;
}

export interface EarlierProposal {
  approvalId: string;
  attempt: number;
  sequence: number;
  state: string;
  digest: string;
  createdAt: Date;
  changes: Change[];
}

type ApprovalContext = {
  binding: ToolBinding | undefined;
  /** the node's binding of the call's precondition tool (its result redaction applies to facts) */
  factsBinding: ToolBinding | undefined;
  processKey: string;
};

/** The frozen binding and process key of each approval's task, in one query for a page of approvals. */
async function contextsOf(
  ctx: EngineContext,
  rows: Pick<ApprovalRow, 'taskId' | 'toolRef'>[],
): Promise<ApprovalContext[]> {
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

function toView(
  ctx: EngineContext,
  a: ApprovalRow,
  { binding, factsBinding, processKey }: ApprovalContext,
): ApprovalView {
  const args = ctx.sealer.openJson<Record<string, unknown>>(a.argumentsEnc) ?? {};
  const { view, redactedPaths } = redactArguments(args, binding?.redact ?? []);
  return {
    id: a.id,
    projectId: a.projectId,
    processInstanceId: a.processInstanceId,
    processKey,
    taskId: a.taskId,
    attempt: a.attempt,
    sequence: a.sequence,
    nodeId: a.nodeId,
    toolRef: a.toolRef,
    model: a.model,
    state: a.state,
    digest: a.digest,
    arguments: view,
    redactedPaths,
    editable: binding?.editable ?? false,
    proposalVersion: a.proposalVersion,
    candidateGroups: a.candidateGroups,
    levels: a.levels,
    currentLevel: a.currentLevel,
    slaDueAt: a.slaDueAt,
    escalated: a.escalated,
    decidedById: a.decidedById,
    decidedByName: a.decidedByName,
    decidedAt: a.decidedAt,
    comment: a.comment,
    onApproval: onApprovalSentence(binding, a),
    voidReason: a.voidReason,
    toolDescription: a.toolDescription,
    facts: a.factsEnc
      ? redactArguments(ctx.sealer.openJson(a.factsEnc), bindingPolicy(factsBinding ?? {}).redactResult).view
      : null,
    ...readable(binding, a, view),
    rule: ruleOf(binding, a),
    createdAt: a.createdAt,
  };
}

export async function toApprovalView(ctx: EngineContext, a: ApprovalRow): Promise<ApprovalView> {
  const [c] = await contextsOf(ctx, [a]);
  return toView(ctx, a, c);
}

/** The approver's views of a page of approvals (one context query, not one per approval). */
export async function toApprovalViews(ctx: EngineContext, rows: ApprovalRow[]): Promise<ApprovalView[]> {
  const contexts = await contextsOf(ctx, rows);
  return rows.map((a, i) => toView(ctx, a, contexts[i]));
}

/** Loads an approval for an actor, or null when it does not exist or the actor may not see it. */
export async function loadApprovalFor(
  ctx: EngineContext,
  actor: Actor,
  id: string,
): Promise<ApprovalView | null> {
  if (!isUuid(id)) return null;
  const [a] = await ctx.db.select().from(approvals).where(eq(approvals.id, id));
  if (!a || !maySeeApproval(actor, a)) return null;
  return toApprovalView(ctx, a);
}

export async function decisionsOf(ctx: EngineContext, approvalId: string): Promise<DecisionView[]> {
  return ctx.db
    .select({
      id: approvalDecisions.id,
      level: approvalDecisions.level,
      version: approvalDecisions.version,
      action: approvalDecisions.action,
      principalName: approvalDecisions.principalName,
      decision: approvalDecisions.decision,
      digest: approvalDecisions.digest,
      editedDigest: approvalDecisions.editedDigest,
      comment: approvalDecisions.comment,
      outcome: approvalDecisions.outcome,
      createdAt: approvalDecisions.createdAt,
      definitionVersion: approvalDecisions.definitionVersion,
      rule: approvalDecisions.rule,
      groups: approvalDecisions.groups,
    })
    .from(approvalDecisions)
    .where(eq(approvalDecisions.approvalId, approvalId))
    .orderBy(asc(approvalDecisions.createdAt));
}

/** Earlier proposals of the same call (same task and tool, earlier attempts or steps), with a diff against this one. */
export async function earlierProposals(ctx: EngineContext, a: ApprovalView): Promise<EarlierProposal[]> {
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
  return rows.map((r) => {
    const args = redactArguments(ctx.sealer.openJson(r.argumentsEnc) ?? {}, binding?.redact ?? []).view;
    return {
      approvalId: r.id,
      attempt: r.attempt,
      sequence: r.sequence,
      state: r.state,
      digest: r.digest,
      createdAt: r.createdAt,
      changes: diffJson(args, a.arguments),
    };
  });
}

/**
 * What seed 001 §四.3 asks an approver to see besides the call: its impact in words, whether it can be
 * undone, its risk, and its time bounds — from the frozen binding (older bindings: their defaults).
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
    expiresAt: a.expiresAt,
    validUntil:
      a.state === 'APPROVED' && a.decidedAt && minutes !== null
        ? new Date(a.decidedAt.getTime() + minutes * 60_000)
        : null,
  };
}

/** The rule of an approval: by its index; older rows kept only the rule's `when`. */
function ruleOf(binding: ToolBinding | undefined, a: ApprovalRow): RuleRef | null {
  if (a.ruleIndex !== null) return ruleAt(binding, a.ruleIndex);
  if (!a.rule) return null;
  const i = (binding?.approvalRules ?? []).findIndex((r) => r.when === a.rule && r.levels.length > 0);
  return i === -1 ? null : ruleAt(binding, i);
}

/** The versions of the approval's call, with who made each and what it changed. */
export async function versionsOf(ctx: EngineContext, a: ApprovalView): Promise<ApprovalVersion[]> {
  const [{ binding }] = await contextsOf(ctx, [a]);
  return approvalVersions(ctx, a, binding);
}
