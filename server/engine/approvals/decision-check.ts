/**
 * The check half of deciding an approval: who may decide, on what, when, and with which edits. It
 * writes nothing; it answers with a verdict that decide.ts carries out (a refusal may carry a change
 * that commits with it: an approval found past its timeout expires, SPEC §14.4).
 */
import { eq } from 'drizzle-orm';
import { processInstances, steps, type ApprovalRow } from '../../db/schema.js';
import { EngineError, type ErrorCode, invalid } from '../../errors.js';
import { toolCallDigest } from '../../shared/canonical.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { parseRedactPath, REDACTED, redactArguments, type ToolBinding } from '../definitions/index.js';
import { isRetired, type LockedTaskRow } from '../lease/index.js';
import { argumentFailures, ruleFor } from './rules.js';
import { type VersionDecider, versionDeciders } from './standing.js';
import { maySeeApproval } from './views.js';
import { expireApproval, stepOf } from './withdraw.js';

export interface DecideInput {
  approvalId: string;
  decision: 'APPROVE' | 'REJECT';
  comment?: string | null;
  digest: string;
  arguments?: Record<string, unknown> | null;
}

/**
 * A refused decision, always thrown after the commit. `recorded`: kept in approval_decisions (and history)
 * like any decision (it came second, on a stale digest, on retired work, from an outsider or a person the
 * separation of duties excludes); else the request was malformed (no comment, bad edits), nothing written.
 */
export interface Refusal {
  error: EngineError;
  recorded: boolean;
  /** a change that commits although the decision is refused */
  effect?: (tx: Tx) => Promise<unknown>;
}

/** An accepted decision: its step, its edit, and who decided which level of the version before it. */
export type Accepted = Exclude<Awaited<ReturnType<typeof checkDecision>>, Refusal>;

/** A refusal kept as evidence, with the change that commits with it (an approval found expired). */
export function refuse(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  effect?: (tx: Tx) => Promise<unknown>,
): Refusal {
  return { error: new EngineError(code, message, details), recorded: true, effect };
}

function malformed(error: EngineError): Refusal {
  return { error, recorded: false };
}

/** Who decides which approval of which task, and what they sent. */
export interface Deciding {
  ctx: EngineContext;
  actor: Actor;
  task: LockedTaskRow;
  a: ApprovalRow;
  input: DecideInput;
}

/** Every rule of a decision, in the order a person should hear about them. */
export async function checkDecision(tx: Tx, d: Deciding) {
  const { actor, task, a } = d;
  const standing = checkStanding(actor, task, a, d.input);
  if (standing) return standing;
  const deciders = await versionDeciders(tx, a);
  const duty = await checkSeparationOfDuties(tx, actor, a, deciders);
  if (duty) return duty;
  const [step] = await tx.select().from(steps).where(stepOf(a));
  const edit = checkEdit(d, task.agentWork!.toolBindings.find((b) => b.ref === a.toolRef)!);
  if (edit && 'error' in edit) return edit;
  return { step, edit, deciders };
}

/** Whether this person may decide this approval now, on the digest they saw. */
function checkStanding(actor: Actor, task: LockedTaskRow, a: ApprovalRow, input: DecideInput) {
  // Every refused attempt is evidence (SPEC §14.5): a worker's or an admin's as much as an outsider's.
  if (actor.kind !== 'HUMAN') {
    return refuse(
      'FORBIDDEN',
      'Only a person (a human principal in a candidate group) can decide an approval; worker and admin credentials never can.',
    );
  }
  // A member of another level who lost the race to a final decision is told ALREADY_DECIDED (and
  // recorded) below, like anyone else who came second; outsiders are FORBIDDEN.
  const lostRace = a.state !== 'PENDING' && maySeeApproval(actor, a);
  if (!a.candidateGroups.some((g) => actor.groups.includes(g)) && !lostRace) {
    return refuse('FORBIDDEN', `Only members of ${a.candidateGroups.join(' or ')} can decide this approval.`);
  }
  if (a.state === 'RETIRED' || isRetired(task)) {
    return refuse(
      'WORK_RETIRED',
      "The process was cancelled or suspended, or the agent's node timed out, while this call waited; the decision has no effect and the call will never run.",
    );
  }
  // Time is checked when a person acts, not only by the sweep (SPEC §14.4).
  if (a.state === 'PENDING' && a.expiresAt && a.expiresAt.getTime() <= Date.now()) {
    return refuse(
      'APPROVAL_EXPIRED',
      `This approval expired at ${a.expiresAt.toISOString()} with no decision; the agent was told and the call will not run as proposed.`,
      { expiresAt: a.expiresAt.toISOString() },
      (tx) => expireApproval(tx, task, a),
    );
  }
  if (a.state !== 'PENDING') {
    return refuse(
      'ALREADY_DECIDED',
      `Someone already decided this approval (${a.state}${a.decidedByName ? ` by ${a.decidedByName}` : ''}); your decision was recorded but has no effect.`,
    );
  }
  if (input.digest !== a.digest) {
    return refuse(
      'STALE_DIGEST',
      'The arguments changed since you looked at them; reload the approval and decide on what it shows now.',
      { digest: a.digest },
    );
  }
  if (input.decision === 'REJECT' && !input.comment?.trim()) {
    return malformed(
      new EngineError('COMMENT_REQUIRED', 'Say why you reject the call: the agent reads your comment.'),
    );
  }
  return null;
}

/**
 * The person who started the process never decides its calls; within one version each level is decided
 * by a different person (whoever decided level k of v may decide level k of v+1).
 */
async function checkSeparationOfDuties(tx: Tx, actor: Actor, a: ApprovalRow, deciders: VersionDecider[]) {
  const [inst] = await tx
    .select({ startedBy: processInstances.startedBy })
    .from(processInstances)
    .where(eq(processInstances.id, a.processInstanceId));
  if (inst?.startedBy === actor.principalId) {
    return refuse(
      'SEPARATION_OF_DUTIES',
      'You started this process, so you cannot approve its calls; another member of the group must decide.',
    );
  }
  if (deciders.some((d) => d.principalId === actor.principalId)) {
    return refuse(
      'SEPARATION_OF_DUTIES',
      `You already decided a level of version ${a.proposalVersion} of this call; a different person must decide this level.`,
    );
  }
  return null;
}

/**
 * Edited arguments (approve with changes) make version v+1, levels afresh: an object, on an editable tool,
 * with APPROVE, accepted by the rules (SPEC §14.3: validated again, refused by a matching deny). The editor
 * counts for `level`, the lowest level naming one of their groups (null: none). Null when nothing edited.
 */
function checkEdit({ ctx, actor, a, input }: Deciding, binding: ToolBinding) {
  if (input.arguments == null) return null;
  if (typeof input.arguments !== 'object' || Array.isArray(input.arguments)) {
    return malformed(
      invalid('Edited arguments are a JSON object, like the proposal.', 'arguments', 'a JSON object'),
    );
  }
  const proposed = keepRedacted(ctx.sealer.openJson(a.argumentsEnc), input.arguments, binding.redact ?? []);
  const digest = toolCallDigest(a.toolRef, proposed);
  if (digest === a.digest) return null;
  if (!binding.editable) {
    return refuse('FORBIDDEN', `${a.toolRef} is not editable: approve or reject the arguments as proposed.`);
  }
  if (input.decision !== 'APPROVE') {
    return malformed(invalid('Edited arguments go with APPROVE only.', 'arguments', 'only with APPROVE'));
  }
  const failures = argumentFailures(binding, proposed);
  if (failures.length > 0) {
    return refuse(
      'INVALID_ARGUMENTS',
      `Your changes are not valid: ${failures.map((f) => f.message).join('; ')}. Fix them, or approve the call as proposed.`,
      { failures: failures.map((f) => ({ check: f.check, message: f.message })) },
    );
  }
  // a person changed the call: an `auto` match does not count, people decide it
  const outcome = ruleFor({ ...binding, dropAuto: true }, proposed);
  if (outcome.kind === 'deny') {
    return refuse(
      'POLICY_DENIED',
      `Refused by policy: ${outcome.rule.deny} Your changes were not applied; the call stays as proposed.`,
      { rule: { index: outcome.rule.index, when: outcome.rule.when, deny: outcome.rule.deny } },
    );
  }
  if (outcome.kind === 'auto') throw new Error('an edited call matched auto');
  const level = outcome.levels.findIndex((groups) => groups.some((g) => actor.groups.includes(g)));
  return {
    args: proposed,
    digest,
    version: a.proposalVersion + 1,
    levels: outcome.levels,
    rule: outcome.rule,
    level: level === -1 ? null : level,
  };
}

/**
 * An approver edits the arguments they were shown; where a redacted value still reads "[redacted]", the
 * real value stays (the approver never saw it, so they cannot have meant to change it).
 */
function keepRedacted(original: unknown, edited: Record<string, unknown>, paths: readonly string[]) {
  if (paths.length === 0) return edited;
  const out = structuredClone(edited);
  for (const p of redactArguments(original, paths).redactedPaths) {
    const path = parseRedactPath(p) ?? [];
    let src: unknown = original;
    let dst: unknown = out;
    for (let i = 0; i < path.length; i++) {
      const s = path[i];
      const k = 'key' in s ? s.key : 'index' in s ? s.index : null;
      if (k === null || typeof src !== 'object' || typeof dst !== 'object' || !src || !dst) break;
      if (!Object.hasOwn(src, k) || !Object.hasOwn(dst, k)) break;
      const d = dst as Record<string | number, unknown>;
      const o = src as Record<string | number, unknown>;
      if (i === path.length - 1 && d[k] === REDACTED) d[k] = o[k];
      src = o[k];
      dst = d[k];
    }
  }
  return out;
}
