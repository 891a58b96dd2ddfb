/**
 * Deciding an approval (SPEC §5): only a human of a candidate group, on the digest they saw; the first
 * decision wins and every refused attempt is recorded. Locks the external task, then the approval, never
 * the instance. Refusals are committed with their record, then thrown.
 */
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { approvalDecisions, approvals, externalTasks, processInstances, steps } from '../../db/schema.js';
import type { ApprovalRow, StepRow } from '../../db/schema.js';
import { EngineError, notFound } from '../../errors.js';
import { parseRedactPath, REDACTED, redactArguments } from '../definitions/index.js';
import { toolCallDigest } from '../../shared/canonical.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { notify, notifyTask } from '../events/index.js';
import { sameProject } from '../common/index.js';
import { actorLabel, appendHistory } from '../history/index.js';
import type { AgentWork } from '../definitions/index.js';
import { isUuid } from '../common/index.js';
import type { LockedTaskRow } from '../lease/index.js';
import { isRetired, lockTask } from '../lease/index.js';
import { describeChanges } from '../common/index.js';
import { maySeeApproval } from './list.js';

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

export interface DecideInput {
  approvalId: string;
  decision: 'APPROVE' | 'REJECT';
  comment?: string | null;
  digest: string;
  arguments?: Record<string, unknown> | null;
}

export async function getApprovalRow(
  ex: EngineContext['db'] | Tx,
  actor: Actor,
  id: string,
): Promise<ApprovalRow> {
  if (!isUuid(id)) throw notFound('approval', id);
  const [row] = await ex.select().from(approvals).where(eq(approvals.id, id)).limit(1);
  if (!row || !sameProject(actor, row.projectId)) throw notFound('approval', id);
  return row;
}

export async function decideApproval(
  ctx: EngineContext,
  actor: Actor,
  input: DecideInput,
): Promise<ApprovalRow> {
  if (actor.kind !== 'HUMAN') {
    throw new EngineError(
      'FORBIDDEN',
      'Only a person (a human principal in a candidate group) can decide an approval; worker and admin credentials never can.',
    );
  }
  const found = await getApprovalRow(ctx.db, actor, input.approvalId);
  const outcome = await ctx.db.transaction(async (tx) => {
    const task = await lockTask(tx, actor, found.taskId);
    const [a] = await tx.select().from(approvals).where(eq(approvals.id, found.id)).for('update');
    // A member of another level who lost the race to a final decision is told ALREADY_DECIDED (and
    // recorded) below, like anyone else who came second; outsiders are FORBIDDEN.
    const lostRace = a.state !== 'PENDING' && maySeeApproval(actor, a);
    if (!a.candidateGroups.some((g) => actor.groups.includes(g)) && !lostRace) {
      return {
        refusal: new EngineError(
          'FORBIDDEN',
          `Only members of ${a.candidateGroups.join(' or ')} can decide this approval.`,
        ),
      };
    }
    const record = async (code: string, editedDigest?: string | null, editedArgs?: unknown) => {
      await tx.insert(approvalDecisions).values({
        approvalId: a.id,
        level: a.currentLevel,
        principalId: actor.principalId,
        principalName: actor.name,
        decision: input.decision,
        digest: input.digest,
        comment: input.comment ?? null,
        editedDigest: editedDigest ?? null,
        editedArgumentsEnc: editedArgs ? ctx.sealer.sealJson(editedArgs) : null,
        outcome: code,
      });
      if (code !== 'ACCEPTED') {
        await appendHistory(tx, {
          projectId: a.projectId,
          processInstanceId: a.processInstanceId,
          eventType: 'APPROVAL_DECISION_REFUSED',
          actor: actorLabel(actor),
          taskId: a.taskId,
          approvalId: a.id,
          data: { code, decision: input.decision, digest: input.digest },
        });
      }
    };
    const refuse = async (e: EngineError) => {
      await record(e.code);
      return { refusal: e };
    };
    if (a.state === 'RETIRED' || isRetired(task)) {
      return refuse(
        new EngineError(
          'WORK_RETIRED',
          'The process was cancelled or suspended while this call waited; the decision has no effect and the call will never run.',
        ),
      );
    }
    if (a.state !== 'PENDING') {
      return refuse(
        new EngineError(
          'ALREADY_DECIDED',
          `Someone already decided this approval (${a.state}${a.decidedByName ? ` by ${a.decidedByName}` : ''}); your decision was recorded but has no effect.`,
        ),
      );
    }
    if (input.digest !== a.digest) {
      return refuse(
        new EngineError(
          'STALE_DIGEST',
          'The arguments changed since you looked at them; reload the approval and decide on what it shows now.',
          { digest: a.digest },
        ),
      );
    }
    if (input.decision === 'REJECT' && !input.comment?.trim()) {
      return {
        refusal: new EngineError(
          'COMMENT_REQUIRED',
          'Say why you reject the call: the agent reads your comment.',
        ),
      };
    }
    const [inst] = await tx
      .select({ startedBy: processInstances.startedBy })
      .from(processInstances)
      .where(eq(processInstances.id, a.processInstanceId));
    const earlier = await tx
      .select({ principalId: approvalDecisions.principalId })
      .from(approvalDecisions)
      .where(and(eq(approvalDecisions.approvalId, a.id), eq(approvalDecisions.outcome, 'ACCEPTED')));
    if (inst?.startedBy === actor.principalId || earlier.some((d) => d.principalId === actor.principalId)) {
      return refuse(
        new EngineError(
          'SEPARATION_OF_DUTIES',
          inst?.startedBy === actor.principalId
            ? 'You started this process, so you cannot approve its calls; another member of the group must decide.'
            : 'You already decided an earlier level of this approval; a different person must decide this level.',
        ),
      );
    }
    const [step] = await tx
      .select()
      .from(steps)
      .where(and(eq(steps.taskId, a.taskId), eq(steps.attempt, a.attempt), eq(steps.sequence, a.sequence)));
    const binding = task.agentWork!.toolBindings.find((b) => b.ref === a.toolRef)!;
    let edited: { args: Record<string, unknown>; digest: string } | null = null;
    if (input.arguments != null) {
      if (typeof input.arguments !== 'object' || Array.isArray(input.arguments)) {
        return {
          refusal: new EngineError(
            'VALIDATION_FAILED',
            'Edited arguments are a JSON object, like the proposal.',
            {
              errors: [{ path: 'arguments', message: 'a JSON object' }],
            },
          ),
        };
      }
      const proposed = keepRedacted(
        ctx.sealer.openJson(a.argumentsEnc),
        input.arguments,
        binding.redact ?? [],
      );
      const digest = toolCallDigest(a.toolRef, proposed);
      if (digest !== a.digest) {
        if (!binding.editable)
          return {
            refusal: new EngineError(
              'FORBIDDEN',
              `${a.toolRef} is not editable: approve or reject the arguments as proposed.`,
            ),
          };
        if (input.decision !== 'APPROVE')
          return {
            refusal: new EngineError('VALIDATION_FAILED', 'Edited arguments go with APPROVE only.', {
              errors: [{ path: 'arguments', message: 'only with APPROVE' }],
            }),
          };
        edited = { args: proposed, digest };
      }
    }
    await record('ACCEPTED', edited?.digest, edited?.args);
    return { approval: await apply(tx, ctx, actor, task, a, step, input, edited) };
  });
  if ('refusal' in outcome && outcome.refusal) throw outcome.refusal;
  return (outcome as { approval: ApprovalRow }).approval;
}

async function apply(
  tx: Tx,
  ctx: EngineContext,
  actor: Actor,
  task: LockedTaskRow,
  a: ApprovalRow,
  step: StepRow,
  input: DecideInput,
  edited: { args: Record<string, unknown>; digest: string } | null,
): Promise<ApprovalRow> {
  const label = actorLabel(actor);
  const base = {
    projectId: a.projectId,
    processInstanceId: a.processInstanceId,
    taskId: a.taskId,
    attempt: a.attempt,
    sequence: a.sequence,
    approvalId: a.id,
    actor: label,
  };
  const digest = edited?.digest ?? a.digest;
  const editedFields = edited
    ? { digest, argumentsEnc: ctx.sealer.sealJson(edited.args), proposalVersion: a.proposalVersion + 1 }
    : {};
  const lastLevel = a.currentLevel >= a.levels.length - 1;
  if (input.decision === 'APPROVE' && !lastLevel) {
    const [row] = await tx
      .update(approvals)
      .set({
        ...editedFields,
        currentLevel: a.currentLevel + 1,
        candidateGroups: a.levels[a.currentLevel + 1],
      })
      .where(eq(approvals.id, a.id))
      .returning();
    await appendHistory(tx, {
      ...base,
      eventType: 'APPROVAL_LEVEL_APPROVED',
      data: {
        level: a.currentLevel + 1,
        of: a.levels.length,
        digest,
        editedFrom: edited ? a.digest : undefined,
      },
    });
    await notify(tx, { type: 'approval', approvalId: a.id, projectId: a.projectId, change: 'decided' });
    return row;
  }
  const approved = input.decision === 'APPROVE';
  const [row] = await tx
    .update(approvals)
    .set({
      ...editedFields,
      state: approved ? 'APPROVED' : 'REJECTED',
      decidedBy: actor.principalId,
      decidedByName: actor.name,
      decidedAt: sql`now()`,
      comment: input.comment ?? null,
    })
    .where(eq(approvals.id, a.id))
    .returning();
  const request = ctx.sealer.openJson<Record<string, unknown>>(step.requestEnc) ?? {};
  // Edits made at this level or an earlier one (the approval's digest moved away from the step's): the
  // step carries the arguments that were approved, and the model is told what changed and by whom.
  const finalArgs =
    approved && digest !== step.digest
      ? (edited?.args ?? ctx.sealer.openJson<Record<string, unknown>>(a.argumentsEnc) ?? {})
      : null;
  let note: string | null = null;
  if (finalArgs) {
    const editors = await tx
      .selectDistinct({ name: approvalDecisions.principalName })
      .from(approvalDecisions)
      .where(
        and(
          eq(approvalDecisions.approvalId, a.id),
          eq(approvalDecisions.outcome, 'ACCEPTED'),
          isNotNull(approvalDecisions.editedDigest),
        ),
      );
    note = `Approved with changes by ${editors.map((e) => e.name).join(', ')}: ${describeChanges(request.arguments, finalArgs)}`;
  }
  await tx
    .update(steps)
    .set({
      state: approved ? 'APPROVED' : 'REJECTED',
      comment: note ?? input.comment ?? null,
      ...(finalArgs ? { digest, requestEnc: ctx.sealer.sealJson({ ...request, arguments: finalArgs }) } : {}),
      updatedAt: sql`now()`,
    })
    .where(
      and(eq(steps.taskId, step.taskId), eq(steps.attempt, step.attempt), eq(steps.sequence, step.sequence)),
    );
  // The decision does not move the token; it only makes the task acquirable again on the same attempt.
  await tx
    .update(externalTasks)
    .set({ state: 'OPEN', workerId: null, availableAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(externalTasks.id, task.id), eq(externalTasks.state, 'AWAITING_APPROVAL')));
  await appendHistory(tx, {
    ...base,
    eventType: approved ? 'APPROVAL_APPROVED' : 'APPROVAL_REJECTED',
    data: { digest, decidedOn: input.digest, edited: edited ? true : undefined, level: a.currentLevel + 1 },
  });
  await appendHistory(tx, {
    ...base,
    eventType: approved ? 'STEP_APPROVED' : 'STEP_REJECTED',
    data: { digest },
  });
  await notify(tx, { type: 'approval', approvalId: a.id, projectId: a.projectId, change: 'decided' });
  await notifyTask(tx, task, 'OPEN');
  return row;
}
