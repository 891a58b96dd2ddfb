/**
 * Approvals (SPEC §5). A proposal parks the task and opens an approval bound to the digest of the exact
 * call, for the groups of the strictest matching rule (or the approvers). Deciding lives in decide.ts.
 */
import { and, desc, eq, lt, sql } from 'drizzle-orm';
import { approvals, externalTasks, processInstances, steps, type StepRow } from '../../db/schema.js';
import { type AgentWork, bindingPolicy, matchesRule, type ToolBinding } from '../definitions/index.js';
import type { EngineContext, Executor } from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import type { HistoryEntry } from '../history/index.js';
import type { LockedTaskRow } from '../lease/index.js';

/**
 * The levels that must decide this call: the matching conditional rule with the most levels (the first
 * of equals), else the approvers. A matching one-level rule replaces the approvers too (`amount > 100`
 * → cfo instead of finance).
 */
export function levelsFor(binding: ToolBinding, args: Record<string, unknown>): string[][] {
  return approvalRuleFor(binding, args).levels;
}

/** levelsFor with the rule it came from: the rule's `when`, or null for the approvers. */
export function approvalRuleFor(
  binding: ToolBinding,
  args: Record<string, unknown>,
): { levels: string[][]; rule: string | null } {
  let chosen: { levels: string[][]; when: string } | null = null;
  for (const rule of binding.approvalRules ?? []) {
    if (rule.levels.length === 0 || (chosen && rule.levels.length <= chosen.levels.length)) continue;
    if (matchesRule(rule.when, args)) chosen = rule;
  }
  return chosen ? { levels: chosen.levels, rule: chosen.when } : { levels: [binding.approvers], rule: null };
}

/** The APPROVAL_OPENED history row; the journal puts it just before the step's STEP_PROPOSED. */
export function approvalOpened(
  task: LockedTaskRow,
  step: Pick<StepRow, 'sequence' | 'digest'>,
  binding: ToolBinding,
  levels: string[][],
  approvalId: string,
): HistoryEntry {
  return {
    projectId: task.projectId,
    processInstanceId: task.processInstanceId,
    taskId: task.id,
    attempt: task.attempt,
    sequence: step.sequence,
    approvalId,
    eventType: 'APPROVAL_OPENED',
    actor: 'engine',
    data: { toolRef: binding.ref, digest: step.digest, candidateGroups: levels[0], levels: levels.length },
  };
}

export interface Proposal {
  task: LockedTaskRow;
  step: StepRow;
  binding: ToolBinding;
  args: Record<string, unknown>;
  work: AgentWork;
  levels: string[][];
  /** chosen by the journal, so that the step row names its approval when it is written */
  approvalId: string;
  /** the precondition read's answer at proposal time, sealed (SPEC §11 facts) */
  factsEnc?: string | null;
  /** the tool server's own description of the tool, as the worker sent it */
  toolDescription?: string | null;
}

/**
 * Opens the approval of a proposed step (already journaled, with its history) and parks the task: the
 * lease goes back with the proposal.
 */
export async function openApproval(ex: Executor, ctx: EngineContext, p: Proposal): Promise<void> {
  const { task, step, binding, levels } = p;
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
  await ex.insert(approvals).values({
    id: p.approvalId,
    rule: approvalRuleFor(binding, p.args).rule,
    definitionVersion: instance?.version ?? null,
    projectId: task.projectId,
    processInstanceId: task.processInstanceId,
    taskId: task.id,
    attempt: task.attempt,
    sequence: step.sequence,
    nodeId: task.nodeId,
    toolRef: binding.ref,
    model: proposer?.model ?? p.work.model,
    state: 'PENDING',
    digest: step.digest,
    argumentsEnc: ctx.sealer.sealJson(p.args),
    factsEnc: p.factsEnc ?? null,
    toolDescription: p.toolDescription ?? null,
    keyId: ctx.sealer.currentKeyId,
    candidateGroups: levels[0],
    levels,
    ...timeBounds(binding),
  });
  await parkForApproval(ex, task, p.approvalId);
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
