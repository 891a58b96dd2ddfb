import {
  type ApprovalView,
  approvalBasis,
  decideApproval,
  decisionsOf,
  earlierProposals,
  levelNumber,
  listApprovals,
  loadApprovalFor,
  maySeeApproval,
  revokeApproval,
  versionsOf,
} from '../../engine/approvals/index.js';
import { builder, byId, connection, type GraphQLContext, pageArgs } from '../builder.js';
import { selectEvents } from '../pubsub.js';
import { eventCursorOf, type Positioned, streamFrom } from '../stream.js';
import {
  ApprovalBasisRef,
  ApprovalDecision,
  ApprovalRuleRef,
  ApprovalState,
  ApprovalVersionRef,
  Decision,
  EarlierProposalRef,
  Risk,
  VoidReason,
} from './approval-evidence.js';

export const Approval = builder.objectRef<ApprovalView>('Approval').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    state: t.field({ type: ApprovalState, resolve: (a) => a.state }),
    toolRef: t.exposeString('toolRef'),
    server: t.string({ resolve: (a) => a.toolRef.split('/')[0] }),
    tool: t.string({ resolve: (a) => a.toolRef.split('/').slice(1).join('/') }),
    processKey: t.exposeString('processKey', { description: 'The process the instance runs.' }),
    nodeId: t.exposeString('nodeId'),
    model: t.exposeString('model', {
      nullable: true,
      description: 'The model that proposed the call (a fallback model when the node fell back).',
    }),
    attempt: t.exposeInt('attempt'),
    sequence: t.exposeInt('sequence'),
    arguments: t.expose('arguments', {
      type: 'JSON',
      description: 'As the evidence policy keeps them; redacted values read "[redacted]".',
    }),
    redactedPaths: t.exposeStringList('redactedPaths'),
    digest: t.exposeString('digest', {
      description: 'SHA-256 of the full call; send it back with your decision.',
    }),
    editable: t.exposeBoolean('editable'),
    proposalVersion: t.exposeInt('proposalVersion', {
      description: 'Deprecated alias of version.',
      deprecationReason: 'Use version.',
    }),
    version: t.exposeInt('proposalVersion', {
      description:
        "1 as proposed; +1 each time an approver approved with changes, or the approval was opened again after its window or its deciders' authority lapsed (see versions and decisions).",
    }),
    candidateGroups: t.exposeStringList('candidateGroups'),
    level: t.int({
      description: 'The first undecided level of the current version, from 1.',
      resolve: (a) => levelNumber(a.currentLevel),
    }),
    levels: t.int({ resolve: (a) => a.levels.length }),
    escalated: t.exposeBoolean('escalated'),
    slaDueAt: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.slaDueAt }),
    decidedBy: t.exposeString('decidedByName', { nullable: true }),
    decidedAt: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.decidedAt }),
    comment: t.exposeString('comment', { nullable: true }),
    processInstanceId: t.exposeID('processInstanceId'),
    taskId: t.exposeID('taskId'),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => a.createdAt }),
    decisions: t.field({ type: [ApprovalDecision], resolve: (a, _x, ctx) => decisionsOf(ctx.engine, a.id) }),
    earlierProposals: t.field({
      type: [EarlierProposalRef],
      resolve: (a, _x, ctx) => earlierProposals(ctx.engine, a),
    }),
  }),
});

/** What seed 001 §四.3 asks an approver to see besides the call (SPEC §11 Readable). */
builder.objectFields(Approval, (t) => ({
  basis: t.field({
    type: ApprovalBasisRef,
    description: 'What the agent saw and said when it proposed the call.',
    resolve: (a, _x, ctx) => approvalBasis(ctx.engine, a),
  }),
  onApproval: t.exposeString('onApproval', { description: 'What happens when it is approved.' }),
  impact: t.exposeString('impact', {
    nullable: true,
    description:
      "The tool's impact sentence rendered from the arguments (as the evidence policy shows them).",
  }),
  reversible: t.exposeBoolean('reversible'),
  facts: t.expose('facts', {
    type: 'JSON',
    nullable: true,
    description:
      "The precondition read's answer when the call was proposed (its tool's result redaction applied); null without a precondition.",
  }),
  toolDescription: t.exposeString('toolDescription', {
    nullable: true,
    description: "The tool server's own description of the tool, as the worker sent it with the proposal.",
  }),
  voidReason: t.expose('voidReason', {
    type: VoidReason,
    nullable: true,
    description: 'Why a VOIDED approval was voided.',
  }),
  risk: t.field({ type: Risk, resolve: (a) => a.risk.toUpperCase() as 'LOW' }),
  expiresAt: t.expose('expiresAt', {
    type: 'DateTime',
    nullable: true,
    description: 'A pending approval with no decision by then expires (approval_timeout_hours).',
  }),
  validUntil: t.expose('validUntil', {
    type: 'DateTime',
    nullable: true,
    description: 'An approved call must start by then (approval_valid_minutes).',
  }),
  rule: t.expose('rule', {
    type: ApprovalRuleRef,
    nullable: true,
    description:
      'The rule that asked for these levels, or approved the call with no person (decidedBy "policy"); null when the tool\'s approvers decide.',
  }),
  versions: t.field({
    type: [ApprovalVersionRef],
    description: 'The versions of the call, oldest first, with who made each and what it changed.',
    resolve: (a, _x, ctx) => versionsOf(ctx.engine, a),
  }),
  eventCursor: t.string({
    description:
      'The position of the latest event about this approval (on a subscription: of the event delivered); resume a subscription with after: it.',
    resolve: (a, _x, ctx) => eventCursorOf(a, ctx),
  }),
}));

const ApprovalConnection = connection<ApprovalView>('Approval', Approval);

const DecideApprovalInput = builder.inputType('DecideApprovalInput', {
  fields: (t) => ({
    approvalId: t.id({ required: true }),
    decision: t.field({ type: Decision, required: true }),
    comment: t.string(),
    digest: t.string({ required: true, description: 'The digest you saw.' }),
    arguments: t.field({ type: 'JSON', description: 'Edited arguments, only where the tool is editable.' }),
  }),
});

const RevokeApprovalInput = builder.inputType('RevokeApprovalInput', {
  fields: (t) => ({
    approvalId: t.id({ required: true }),
    comment: t.string({ required: true, description: 'Why; the agent reads it as the rejection.' }),
  }),
});

function approvalStream(opened: boolean) {
  return async (_r: unknown, args: { after?: string | null }, ctx: GraphQLContext) => {
    const actor = ctx.actor!;
    const admin = { ...actor, kind: 'ADMIN' as const, projectId: null };
    const events = await streamFrom(ctx, { type: 'approval', opened }, args.after);
    return selectEvents(events, async (e) => {
      // workers never see approvals (maySeeApproval): a worker's replay loads nothing
      if (e.type !== 'approval' || actor.kind === 'WORKER') return null;
      // the approval as it stands now, loaded once per delivered event for every subscriber of it
      const row = await ctx.hub.share(e, async (): Promise<Positioned<ApprovalView> | null> => {
        const a = await loadApprovalFor(ctx.engine, admin, e.approvalId);
        return a && { ...a, eventPosition: e.position };
      });
      return row && maySeeApproval(actor, row) ? row : null;
    });
  };
}

const AFTER_DESCRIPTION =
  'Replay first, in order and once, the events after this eventCursor (kept ABADA_EVENT_RETENTION_HOURS), then go live.';

builder.queryFields((t) => ({
  approvals: t.field({
    type: ApprovalConnection,
    args: { state: t.arg({ type: ApprovalState }), mine: t.arg.boolean(), ...pageArgs(t.arg) },
    resolve: (_r, a, ctx) => listApprovals(ctx.engine, ctx.actor!, a),
  }),
  approval: byId(t, Approval, loadApprovalFor, { nullable: true }),
}));

builder.mutationFields((t) => ({
  decideApproval: t.field({
    type: Approval,
    args: { input: t.arg({ type: DecideApprovalInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      decideApproval(ctx.engine, ctx.actor!, {
        ...input,
        arguments: (input.arguments as Record<string, unknown> | null | undefined) ?? null,
      }),
  }),
  revokeApproval: t.field({
    type: Approval,
    description:
      'Withdraws an approval until its call starts (a person who decided it, or an admin): the approval becomes REVOKED and the model reads the comment as a rejection. After the call started: ALREADY_EXECUTING.',
    args: { input: t.arg({ type: RevokeApprovalInput, required: true }) },
    resolve: (_r, { input }, ctx) => revokeApproval(ctx.engine, ctx.actor!, input),
  }),
}));

builder.subscriptionFields((t) => ({
  approvalOpened: t.field({
    type: Approval,
    description: 'Approvals opened that you may see (your groups, your project).',
    args: { after: t.arg.string({ description: AFTER_DESCRIPTION }) },
    subscribe: approvalStream(true),
    resolve: (a) => a,
  }),
  approvalChanged: t.field({
    type: Approval,
    description: 'Approvals decided, escalated, retired or revoked that you may see.',
    args: { after: t.arg.string({ description: AFTER_DESCRIPTION }) },
    subscribe: approvalStream(false),
    resolve: (a) => a,
  }),
}));
