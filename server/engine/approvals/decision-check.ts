/**
 * The check half of deciding an approval: who may decide, on what, and with which edits. It writes
 * nothing; it answers with a verdict that decide.ts carries out.
 */
import { and, eq } from 'drizzle-orm';
import {
  approvalDecisions,
  processInstances,
  steps,
  type ApprovalRow,
  type StepRow,
} from '../../db/schema.js';
import { EngineError, type ErrorCode, invalid } from '../../errors.js';
import { toolCallDigest } from '../../shared/canonical.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { parseRedactPath, REDACTED, redactArguments, type ToolBinding } from '../definitions/index.js';
import { isRetired, type LockedTaskRow } from '../lease/index.js';
import { maySeeApproval } from './visibility.js';

export interface DecideInput {
  approvalId: string;
  decision: 'APPROVE' | 'REJECT';
  comment?: string | null;
  digest: string;
  arguments?: Record<string, unknown> | null;
}

/** Arguments an approver edited (approve with changes), with the digest of the edited call. */
export interface Edit {
  args: Record<string, unknown>;
  digest: string;
}

/**
 * A refused decision, always thrown after the transaction commits. `recorded`: the decision was
 * well-formed but lost (came second, on a stale digest, on retired work, from a person the separation
 * of duties excludes), so it is kept in approval_decisions and history like any decision; otherwise the
 * request itself was wrong (an outsider, no comment, bad edits) and nothing is written.
 */
export interface Refusal {
  error: EngineError;
  recorded: boolean;
}

type Refused = { refusal: Refusal };
export type Verdict = Refused | { accepted: { step: StepRow; edit: Edit | null } };

function refuse(
  recorded: boolean,
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
): Refused {
  return { refusal: { error: new EngineError(code, message, details), recorded } };
}

/** Every rule of a decision, in the order a person should hear about them. */
export async function checkDecision(
  tx: Tx,
  ctx: EngineContext,
  actor: Actor,
  task: LockedTaskRow,
  a: ApprovalRow,
  input: DecideInput,
): Promise<Verdict> {
  const standing = checkStanding(actor, task, a, input);
  if (standing) return standing;
  const duty = await checkSeparationOfDuties(tx, actor, a);
  if (duty) return duty;
  const [step] = await tx
    .select()
    .from(steps)
    .where(and(eq(steps.taskId, a.taskId), eq(steps.attempt, a.attempt), eq(steps.sequence, a.sequence)));
  const binding = task.agentWork!.toolBindings.find((b) => b.ref === a.toolRef)!;
  const edit = checkEdit(ctx, a, binding, input);
  if (edit && 'refusal' in edit) return edit;
  return { accepted: { step, edit } };
}

/** Whether this person may decide this approval now, on the digest they saw. */
function checkStanding(
  actor: Actor,
  task: LockedTaskRow,
  a: ApprovalRow,
  input: DecideInput,
): Refused | null {
  // A member of another level who lost the race to a final decision is told ALREADY_DECIDED (and
  // recorded) below, like anyone else who came second; outsiders are FORBIDDEN.
  const lostRace = a.state !== 'PENDING' && maySeeApproval(actor, a);
  if (!a.candidateGroups.some((g) => actor.groups.includes(g)) && !lostRace) {
    return refuse(
      false,
      'FORBIDDEN',
      `Only members of ${a.candidateGroups.join(' or ')} can decide this approval.`,
    );
  }
  if (a.state === 'RETIRED' || isRetired(task)) {
    return refuse(
      true,
      'WORK_RETIRED',
      'The process was cancelled or suspended while this call waited; the decision has no effect and the call will never run.',
    );
  }
  if (a.state !== 'PENDING') {
    return refuse(
      true,
      'ALREADY_DECIDED',
      `Someone already decided this approval (${a.state}${a.decidedByName ? ` by ${a.decidedByName}` : ''}); your decision was recorded but has no effect.`,
    );
  }
  if (input.digest !== a.digest) {
    return refuse(
      true,
      'STALE_DIGEST',
      'The arguments changed since you looked at them; reload the approval and decide on what it shows now.',
      { digest: a.digest },
    );
  }
  if (input.decision === 'REJECT' && !input.comment?.trim()) {
    return refuse(false, 'COMMENT_REQUIRED', 'Say why you reject the call: the agent reads your comment.');
  }
  return null;
}

/** The person who started the process, or who decided an earlier level, may not decide (this level). */
async function checkSeparationOfDuties(tx: Tx, actor: Actor, a: ApprovalRow): Promise<Refused | null> {
  const [inst] = await tx
    .select({ startedBy: processInstances.startedBy })
    .from(processInstances)
    .where(eq(processInstances.id, a.processInstanceId));
  if (inst?.startedBy === actor.principalId) {
    return refuse(
      true,
      'SEPARATION_OF_DUTIES',
      'You started this process, so you cannot approve its calls; another member of the group must decide.',
    );
  }
  const earlier = await tx
    .select({ principalId: approvalDecisions.principalId })
    .from(approvalDecisions)
    .where(and(eq(approvalDecisions.approvalId, a.id), eq(approvalDecisions.outcome, 'ACCEPTED')));
  if (earlier.some((d) => d.principalId === actor.principalId)) {
    return refuse(
      true,
      'SEPARATION_OF_DUTIES',
      'You already decided an earlier level of this approval; a different person must decide this level.',
    );
  }
  return null;
}

/** Edited arguments: an object, on an editable tool, with APPROVE. Null when nothing was edited. */
function checkEdit(
  ctx: EngineContext,
  a: ApprovalRow,
  binding: ToolBinding,
  input: DecideInput,
): Edit | Refused | null {
  if (input.arguments == null) return null;
  if (typeof input.arguments !== 'object' || Array.isArray(input.arguments)) {
    return {
      refusal: {
        error: invalid(
          'Edited arguments are a JSON object, like the proposal.',
          'arguments',
          'a JSON object',
        ),
        recorded: false,
      },
    };
  }
  const proposed = keepRedacted(ctx.sealer.openJson(a.argumentsEnc), input.arguments, binding.redact ?? []);
  const digest = toolCallDigest(a.toolRef, proposed);
  if (digest === a.digest) return null;
  if (!binding.editable) {
    return refuse(
      false,
      'FORBIDDEN',
      `${a.toolRef} is not editable: approve or reject the arguments as proposed.`,
    );
  }
  if (input.decision !== 'APPROVE') {
    return {
      refusal: {
        error: invalid('Edited arguments go with APPROVE only.', 'arguments', 'only with APPROVE'),
        recorded: false,
      },
    };
  }
  return { args: proposed, digest };
}

/**
 * An approver edits the arguments they were shown; where a redacted value still reads "[redacted]", the
 * real value stays (the approver never saw it, so they cannot have meant to change it).
 */
function keepRedacted(
  original: unknown,
  edited: Record<string, unknown>,
  paths: readonly string[],
): Record<string, unknown> {
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
      if (i === path.length - 1) {
        if (d[k] === REDACTED) d[k] = o[k];
      } else {
        src = o[k];
        dst = d[k];
      }
    }
  }
  return out;
}
