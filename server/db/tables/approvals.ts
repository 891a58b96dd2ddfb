import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, projectId, references, ts } from './columns.js';
import { processInstances } from './instances.js';
import { externalTasks } from './tasks.js';

/** A person's decision on a proposed call (SPEC §5); multi-level rules keep several levels here. */
export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: projectId(),
    processInstanceId: references('process_instance_id', () => processInstances.id),
    taskId: references('task_id', () => externalTasks.id),
    attempt: integer('attempt').notNull(),
    sequence: integer('sequence').notNull(),
    nodeId: text('node_id').notNull(),
    toolRef: text('tool_ref').notNull(),
    model: text('model'),
    state: text('state')
      .$type<'PENDING' | 'APPROVED' | 'REJECTED' | 'RETIRED' | 'REVOKED' | 'EXPIRED' | 'VOIDED'>()
      .notNull(),
    /** digest of the proposal as it stands (changes when an approver edits the arguments) */
    digest: text('digest').notNull(),
    /** the arguments (full, encrypted); the approver's view is redacted at read time */
    argumentsEnc: text('arguments_enc').notNull(),
    keyId: text('key_id').notNull(),
    candidateGroups: text('candidate_groups').array().notNull(),
    /** for multi-level rules: the groups of each level, in order */
    levels: jsonb('levels').$type<string[][]>().notNull(),
    /** The level deciding now, 0-based into `levels` (only the API and history data count from 1). */
    currentLevel: integer('current_level').notNull().default(0),
    /** bumped when an approver edits the arguments (approve with changes); decisions keep each version */
    proposalVersion: integer('proposal_version').notNull().default(1),
    slaDueAt: ts('sla_due_at'),
    /** a PENDING approval with no decision by then expires (approval_timeout_hours; null: never) */
    expiresAt: ts('expires_at'),
    escalated: boolean('escalated').notNull().default(false),
    escalatedAt: ts('escalated_at'),
    /** the principal who made the final decision (their name, as the API shows it, is decidedByName) */
    decidedById: uuid('decided_by_id'),
    decidedByName: text('decided_by_name'),
    decidedAt: ts('decided_at'),
    comment: text('comment'),
    /** the approval rule whose levels apply: its `when`, or null for the tool's approvers */
    rule: text('rule'),
    /** that rule's index in the binding's merged rule list (null: the tool's approvers, or older rows) */
    ruleIndex: integer('rule_index'),
    /** the arguments as the agent proposed them: version 1 (or the reopened version) before any edit */
    proposedArgumentsEnc: text('proposed_arguments_enc'),
    /** the version of the definition the instance runs (null on approvals opened before it was kept) */
    definitionVersion: integer('definition_version'),
    /** the precondition read's answer when the call was proposed (sealed like the arguments) */
    factsEnc: text('facts_enc'),
    /** the tool server's own description of the tool, as the worker sent it with the proposal */
    toolDescription: text('tool_description'),
    voidReason: text('void_reason').$type<'AUTHORITY' | 'PRECONDITION'>(),
    createdAt: createdAt(),
  },
  (t) => [
    // a step has at most one live approval; expired and voided ones stay as earlier versions
    uniqueIndex('approvals_step_uq')
      .on(t.taskId, t.attempt, t.sequence)
      .where(sql`state NOT IN ('EXPIRED', 'VOIDED')`),
    index('approvals_expiry_idx').on(t.expiresAt).where(sql`state = 'PENDING'`),
    index('approvals_project_state_idx').on(t.projectId, t.state, t.createdAt),
    index('approvals_sla_idx').on(t.slaDueAt).where(sql`state = 'PENDING' AND escalated = false`),
  ],
);

/** Every decision attempt, winners and losers (ALREADY_DECIDED is recorded too). */
export const approvalDecisions = pgTable(
  'approval_decisions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    approvalId: references('approval_id', () => approvals.id),
    /**
     * The level the decision counts for, 0-based like approvals.current_level; null when it counts for
     * none (an approver's edit whose new version has no level naming their groups, or a refused attempt
     * by someone who decides no level).
     */
    level: integer('level'),
    /**
     * The version of the call the decision is on: the approval's version, or for an approval with
     * changes the version it made (SPEC §14.3: decisions on v never count for v+1).
     */
    version: integer('version').notNull().default(1),
    principalId: uuid('principal_id').notNull(),
    principalName: text('principal_name').notNull(),
    decision: text('decision').$type<'APPROVE' | 'REJECT'>().notNull(),
    digest: text('digest').notNull(),
    /** set when the approver edited the arguments: the digest of the edited proposal */
    editedDigest: text('edited_digest'),
    editedArgumentsEnc: text('edited_arguments_enc'),
    comment: text('comment'),
    /** the policy the decision was made under: definition version, rule, the person's groups then */
    definitionVersion: integer('definition_version'),
    rule: text('rule'),
    groups: text('groups').array(),
    /** ACCEPTED, or the refusal code (ALREADY_DECIDED, STALE_DIGEST, …) */
    outcome: text('outcome').notNull(),
    /**
     * For a refusal: whether it has its own APPROVAL_DECISION_REFUSED history row (at most one per
     * actor, approval and code a minute; the others are counted on the next one).
     */
    chained: boolean('chained').notNull().default(true),
    action: text('action').$type<'DECIDE' | 'REVOKE'>().notNull().default('DECIDE'),
    createdAt: createdAt(),
  },
  (t) => [index('approval_decisions_approval_idx').on(t.approvalId, t.createdAt)],
);

export type ApprovalRow = typeof approvals.$inferSelect;
