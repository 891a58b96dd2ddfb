/**
 * Approvals (SPEC §5, §14.1). A proposal the rules send to people parks the task and opens an approval
 * bound to the digest of the exact call, for the groups of the rule with most levels (or the approvers);
 * one an `auto` rule matches is stored APPROVED by the policy and the worker goes on under its lease.
 */
import { and, desc, eq, lt, sql } from 'drizzle-orm';
import {
  type ApprovalRow,
  approvals,
  externalTasks,
  processInstances,
  steps,
  type StepRow,
} from '../../db/schema.js';
import { type AgentWork, bindingPolicy, type ToolBinding } from '../definitions/index.js';
import type { EngineContext, Executor } from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import { appendHistory, type HistoryEntry } from '../history/index.js';
import { attemptHistory, type LockedTaskRow } from '../lease/index.js';
import { type RuleOutcome, type RuleRef, ruleRecord } from './rules.js';

/** Who decided an approval an `auto` rule approved (`Approval.decidedBy`). */
export const POLICY_DECIDER = 'policy';

/** Whether an approval was approved by an `auto` rule (no person decided it). */
export function isAutoApproval(a: Pick<ApprovalRow, 'decidedById' | 'decidedByName'>) {
  return a.decidedById === null && a.decidedByName === POLICY_DECIDER;
}

export type OpenOutcome = Exclude<RuleOutcome, { kind: 'deny' }>;

/** The levels an outcome asks for: an auto approval keeps the tool's approvers as who may see it. */
export function levelsOf(outcome: OpenOutcome, binding: ToolBinding): string[][] {
  return outcome.kind === 'levels' ? outcome.levels : [binding.approvers];
}

/** The APPROVAL_OPENED history row; the journal puts it just before the step's STEP_PROPOSED. */
export function approvalOpened(
  task: LockedTaskRow,
  step: Pick<StepRow, 'sequence' | 'digest'>,
  binding: Pick<ToolBinding, 'ref'>,
  levels: string[][],
  approvalId: string,
): HistoryEntry {
  return {
    ...attemptHistory(task, 'engine'),
    sequence: step.sequence,
    approvalId,
    eventType: 'APPROVAL_OPENED',
    data: { toolRef: binding.ref, digest: step.digest, candidateGroups: levels[0], levels: levels.length },
  };
}

export interface Proposal {
  task: LockedTaskRow;
  step: StepRow;
  binding: ToolBinding;
  args: Record<string, unknown>;
  work: AgentWork;
  outcome: OpenOutcome;
  /** chosen by the journal, so that the step row names its approval when it is written */
  approvalId: string;
  /** the precondition read's answer at proposal time, sealed (SPEC §11 facts) */
  factsEnc?: string | null;
  /** the tool server's own description of the tool, as the worker sent it */
  toolDescription?: string | null;
}

/**
 * Opens the approval of a proposed step (already journaled, with its history): for people, it parks
 * the task (the lease goes back with the proposal); approved by an `auto` rule, it writes APPROVAL_AUTO
 * and STEP_APPROVED after the step's STEP_PROPOSED and leaves the lease with the worker.
 */
export async function openApproval(ex: Executor, ctx: EngineContext, p: Proposal): Promise<void> {
  const { task, step, binding, outcome, approvalId } = p;
  const levels = levelsOf(outcome, binding);
  // The approver is shown the model that asked for the call: a fallback model when the node fell back.
  const [proposer] = await ex
    .select({ model: steps.model })
    .from(steps)
    .where(
      and(
        eq(steps.taskId, task.id),
        eq(steps.attempt, task.attempt),
        eq(steps.kind, 'MODEL_CALL'),
        lt(steps.sequence, step.sequence),
      ),
    )
    .orderBy(desc(steps.sequence))
    .limit(1);
  const [instance] = await ex
    .select({ version: processInstances.version })
    .from(processInstances)
    .where(eq(processInstances.id, task.processInstanceId));
  const argumentsEnc = ctx.sealer.sealJson(p.args);
  const auto = outcome.kind === 'auto';
  await ex.insert(approvals).values({
    id: approvalId,
    rule: outcome.rule?.when ?? null,
    ruleIndex: outcome.rule?.index ?? null,
    definitionVersion: instance?.version ?? null,
    projectId: task.projectId,
    processInstanceId: task.processInstanceId,
    taskId: task.id,
    attempt: task.attempt,
    sequence: step.sequence,
    nodeId: task.nodeId,
    toolRef: binding.ref,
    model: proposer?.model ?? p.work.model,
    state: auto ? 'APPROVED' : 'PENDING',
    digest: step.digest,
    argumentsEnc,
    proposedArgumentsEnc: argumentsEnc,
    factsEnc: p.factsEnc ?? null,
    toolDescription: p.toolDescription ?? null,
    keyId: ctx.sealer.currentKeyId,
    candidateGroups: levels[0],
    levels,
    ...(auto
      ? { decidedById: null, decidedByName: POLICY_DECIDER, decidedAt: sql`now()` }
      : timeBounds(binding)),
  });
  if (outcome.kind !== 'auto') return parkForApproval(ex, task, approvalId);
  await appendHistory(ex, ...autoHistory(task, step, outcome.rule, 1, instance?.version ?? null, approvalId));
  await notify(ex, { type: 'approval', approvalId, projectId: task.projectId, change: 'decided' });
}

/** An `auto` approval's rows: APPROVAL_AUTO (version, digest, rule, definition version) and STEP_APPROVED. */
export function autoHistory(
  task: Pick<LockedTaskRow, 'projectId' | 'processInstanceId' | 'id' | 'attempt'>,
  step: Pick<StepRow, 'sequence' | 'digest'>,
  rule: RuleRef,
  version: number,
  definitionVersion: number | null,
  approvalId: string,
): HistoryEntry[] {
  const base = { ...attemptHistory(task, POLICY_DECIDER), sequence: step.sequence, approvalId };
  return [
    {
      ...base,
      eventType: 'APPROVAL_AUTO',
      data: { version, decision: 'APPROVE', digest: step.digest, rule: ruleRecord(rule), definitionVersion },
    },
    { ...base, eventType: 'STEP_APPROVED', data: { digest: step.digest, auto: true } },
  ];
}

/** When a new approval's SLA falls due and when, undecided, it expires — from its binding. */
export function timeBounds(binding: ToolBinding | undefined) {
  const sla = binding?.approvalSlaHours ?? null;
  const timeout = bindingPolicy(binding ?? {}).approvalTimeoutHours;
  return {
    slaDueAt: sla != null ? sql`now() + make_interval(secs => ${sla * 3600})` : null,
    expiresAt: timeout != null ? sql`now() + make_interval(secs => ${timeout * 3600})` : null,
  };
}

/**
 * The task waits for people: no worker holds a slot while a person thinks. worker_id and leased_by stay
 * as a record of who proposed, so that worker (and only it) can re-send the proposal.
 */
export async function parkForApproval(ex: Executor, task: LockedTaskRow, approvalId: string) {
  await ex
    .update(externalTasks)
    .set({ state: 'AWAITING_APPROVAL', leaseExpiresAt: null, updatedAt: sql`now()` })
    .where(eq(externalTasks.id, task.id));
  await notify(ex, { type: 'approval', approvalId, projectId: task.projectId, change: 'opened' });
  await notifyTask(ex, task, 'AWAITING_APPROVAL');
}
