/**
 * The evidence an approval carries, as GraphQL types: decisions (and refused attempts), the rule that
 * asked for its levels, its versions, earlier proposals, what the agent saw (the basis).
 */
import type {
  ApprovalBasis,
  ApprovalVersion,
  BasisCall,
  DecisionView,
  EarlierProposal,
  RuleRef,
} from '../../engine/approvals/index.js';
import { levelNumber } from '../../engine/approvals/index.js';
import type { Change } from '../../engine/common/index.js';
import { builder } from '../builder.js';
import { StepState } from './step.js';

export const ApprovalState = builder.enumType('ApprovalState', {
  values: ['PENDING', 'APPROVED', 'REJECTED', 'RETIRED', 'REVOKED', 'EXPIRED', 'VOIDED'] as const,
});
export const Decision = builder.enumType('Decision', { values: ['APPROVE', 'REJECT'] as const });

export const ApprovalDecision = builder.objectRef<DecisionView>('ApprovalDecision').implement({
  description:
    'A decision or revoke attempt on an approval; refused attempts (ALREADY_DECIDED, STALE_DIGEST, FORBIDDEN…) are kept too.',
  fields: (t) => ({
    id: t.exposeID('id'),
    level: t.int({
      nullable: true,
      description:
        "The level the decision counts for, from 1; null when it counts for none (an approval with changes whose new version has no level naming the editor's groups).",
      resolve: (d) => (d.level === null ? null : levelNumber(d.level)),
    }),
    version: t.exposeInt('version', {
      description:
        'The version of the call the decision is on; an approval with changes is on the version it made. Decisions on one version never count for another.',
    }),
    action: t.exposeString('action', { description: 'DECIDE or REVOKE.' }),
    decidedBy: t.exposeString('principalName'),
    decision: t.field({ type: Decision, resolve: (d) => d.decision as 'APPROVE' | 'REJECT' }),
    digest: t.exposeString('digest'),
    editedDigest: t.exposeString('editedDigest', { nullable: true }),
    comment: t.exposeString('comment', { nullable: true }),
    outcome: t.exposeString('outcome'),
    at: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
    definitionVersion: t.exposeInt('definitionVersion', {
      nullable: true,
      description: 'The version of the definition the decision was made under.',
    }),
    rule: t.exposeString('rule', {
      nullable: true,
      description: "The approval rule whose levels applied (its `when`); null: the tool's approvers.",
    }),
    groups: t.exposeStringList('groups', {
      nullable: true,
      description: "The person's groups when they decided.",
    }),
  }),
});

const ArgumentChange = builder.objectRef<Change>('ArgumentChange').implement({
  fields: (t) => ({
    path: t.exposeString('path'),
    before: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.before ?? null }),
    after: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.after ?? null }),
  }),
});

export const EarlierProposalRef = builder.objectRef<EarlierProposal>('EarlierProposal').implement({
  fields: (t) => ({
    approvalId: t.exposeID('approvalId'),
    attempt: t.exposeInt('attempt'),
    sequence: t.exposeInt('sequence'),
    state: t.field({ type: ApprovalState, resolve: (p) => p.state as 'PENDING' }),
    digest: t.exposeString('digest'),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.createdAt }),
    changes: t.expose('changes', { type: [ArgumentChange], description: 'What differs from this approval.' }),
  }),
});

const ApprovalLevel = builder.objectRef<string[]>('ApprovalLevel').implement({
  description: 'One level of a rule: any member of these groups may decide it.',
  fields: (t) => ({ groups: t.stringList({ resolve: (g) => g }) }),
});

export const ApprovalRuleRef = builder.objectRef<RuleRef>('ApprovalRule').implement({
  description:
    "A rule over the call's arguments: when `when` holds, its levels decide, it runs with no person (auto), or it is refused (deny).",
  fields: (t) => ({
    index: t.exposeInt('index', {
      description: "Its place in the binding's rules (the tool's rules, then the node's), from 0.",
    }),
    when: t.exposeString('when'),
    levels: t.expose('levels', {
      type: [ApprovalLevel],
      description: 'The groups deciding in turn (empty for auto and deny).',
    }),
    auto: t.exposeBoolean('auto'),
    deny: t.exposeString('deny', { nullable: true }),
  }),
});

export const ApprovalVersionRef = builder.objectRef<ApprovalVersion>('ApprovalVersion').implement({
  description:
    'One version of the call: as the agent proposed it, then each approval with changes. Every level decides the version that runs.',
  fields: (t) => ({
    version: t.exposeInt('version'),
    digest: t.exposeString('digest'),
    arguments: t.expose('arguments', {
      type: 'JSON',
      nullable: true,
      description: 'As the evidence policy keeps them; null when an older approval kept no copy.',
    }),
    editedBy: t.exposeString('editedBy', {
      nullable: true,
      description: "Who made this version by approving with changes; null for the agent's proposal.",
    }),
    changes: t.expose('changes', {
      type: [ArgumentChange],
      description: 'What differs from the version before.',
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (v) => v.createdAt }),
  }),
});

export const Risk = builder.enumType('Risk', { values: ['LOW', 'MEDIUM', 'HIGH'] as const });
export const VoidReason = builder.enumType('VoidReason', { values: ['AUTHORITY', 'PRECONDITION'] as const });

const BasisCallRef = builder.objectRef<BasisCall>('BasisCall').implement({
  description: 'A tool call the agent made before proposing this one, in the same attempt.',
  fields: (t) => ({
    sequence: t.exposeInt('sequence'),
    toolRef: t.exposeString('toolRef'),
    arguments: t.field({ type: 'JSON', resolve: (c) => c.arguments }),
    response: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.response }),
    error: t.exposeString('error', { nullable: true }),
    state: t.field({ type: StepState, resolve: (c) => c.state as 'COMPLETED' }),
  }),
});

export const ApprovalBasisRef = builder.objectRef<ApprovalBasis>('ApprovalBasis').implement({
  description:
    'What the agent saw and said when it proposed the call: from the journal, as the evidence policy keeps it.',
  fields: (t) => ({
    inputs: t.field({ type: 'JSON', description: "The agent node's inputs.", resolve: (b) => b.inputs }),
    modelText: t.exposeString('modelText', {
      nullable: true,
      description: 'The text the model wrote next to the call; null when it wrote none.',
    }),
    priorCalls: t.field({ type: [BasisCallRef], resolve: (b) => b.priorCalls }),
    redactedPaths: t.exposeStringList('redactedPaths'),
  }),
});
