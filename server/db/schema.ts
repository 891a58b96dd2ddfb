/**
 * The whole data model of Abada (SPEC §2–8). Columns are snake_case in PostgreSQL, camelCase here.
 * Hand-written SQL that drizzle cannot express (the history hash-chain trigger, storage parameters of the
 * hot external_tasks table) lives in the custom migrations under drizzle/.
 */
import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

export const projects = pgTable('projects', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

/** Who calls the API. Tokens are random, shown once, stored as SHA-256 (they carry 256 bits of entropy). */
export const principals = pgTable(
  'principals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** null = a global principal (the first-party worker serving every project) */
    projectId: text('project_id').references(() => projects.id),
    kind: text('kind').$type<'WORKER' | 'HUMAN' | 'ADMIN'>().notNull(),
    name: text('name').notNull(),
    groups: text('groups').array().notNull().default(sql`'{}'`),
    topics: text('topics').array().notNull().default(sql`'{}'`),
    tokenHash: text('token_hash').notNull(),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
    disabledAt: ts('disabled_at'),
  },
  (t) => [uniqueIndex('principals_token_hash_uq').on(t.tokenHash)],
);

/** The current spec of each tool server; definitions freeze what they use at deployment. */
export const toolServers = pgTable(
  'tool_servers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    name: text('name').notNull(),
    spec: jsonb('spec').notNull(),
    version: integer('version').notNull().default(1),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('tool_servers_project_name_uq').on(t.projectId, t.name)],
);

/** Secrets for tool servers, AES-256-GCM encrypted; key_id names the key that sealed the row. */
export const credentials = pgTable(
  'credentials',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    name: text('name').notNull(),
    secretEnc: text('secret_enc').notNull(),
    keyId: text('key_id').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('credentials_project_name_uq').on(t.projectId, t.name)],
);

/** One row per deployed version of a process; `spec` is the FrozenProcess (bindings included). */
export const definitions = pgTable(
  'definitions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    key: text('key').notNull(),
    version: integer('version').notNull(),
    spec: jsonb('spec').notNull(),
    source: text('source').notNull(),
    sourceSha256: text('source_sha256').notNull(),
    deployedBy: uuid('deployed_by'),
    deployedAt: ts('deployed_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('definitions_project_key_version_uq').on(t.projectId, t.key, t.version)],
);

export const processInstances = pgTable(
  'process_instances',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    definitionId: uuid('definition_id')
      .notNull()
      .references(() => definitions.id),
    key: text('key').notNull(),
    version: integer('version').notNull(),
    state: text('state').$type<'ACTIVE' | 'SUSPENDED' | 'COMPLETED' | 'CANCELLED' | 'FAILED'>().notNull(),
    currentNodeId: text('current_node_id'),
    variables: jsonb('variables').notNull().default({}),
    businessKey: text('business_key'),
    startedBy: uuid('started_by'),
    /** delegation: the parent's external task that waits for this child (SPEC §6) */
    parentTaskId: uuid('parent_task_id'),
    parentSequence: integer('parent_sequence'),
    /** the parent's attempt when it delegated: a CHILD_DONE completes that attempt's step only */
    parentAttempt: integer('parent_attempt'),
    depth: integer('depth').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    index('process_instances_project_state_idx').on(t.projectId, t.state, t.createdAt),
    index('process_instances_parent_task_idx').on(t.parentTaskId),
  ],
);

/**
 * Agent and service work. Hot table: the claim statement reads it through two partial indexes (OPEN
 * rows by topic and priority, LEASED rows by lease expiry) so that finished rows never slow a fetch.
 */
export const externalTasks = pgTable(
  'external_tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    processInstanceId: uuid('process_instance_id')
      .notNull()
      .references(() => processInstances.id),
    nodeId: text('node_id').notNull(),
    nodeType: text('node_type').$type<'agent' | 'service'>().notNull(),
    topicName: text('topic_name').notNull(),
    state: text('state')
      .$type<
        'OPEN' | 'LEASED' | 'AWAITING_APPROVAL' | 'AWAITING_CHILD' | 'COMPLETED' | 'FAILED' | 'CANCELLED'
      >()
      .notNull(),
    priority: integer('priority').notNull().default(0),
    attempt: integer('attempt').notNull().default(1),
    maxAttempts: integer('max_attempts').notNull().default(3),
    workerId: text('worker_id'),
    leasedBy: uuid('leased_by'),
    leaseExpiresAt: ts('lease_expires_at'),
    availableAt: ts('available_at').notNull().defaultNow(),
    /** lease expiries on the current attempt (poison-work protection) */
    leaseExpiries: integer('lease_expiries').notNull().default(0),
    /** the frozen AgentWork of an agent node (prompt template, inputs, bindings, limits) */
    agentWork: jsonb('agent_work'),
    metadata: jsonb('metadata'),
    errorType: text('error_type'),
    errorMessage: text('error_message'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    index('external_tasks_open_idx')
      .on(t.topicName, t.priority.desc(), t.availableAt)
      .where(sql`state = 'OPEN'`),
    index('external_tasks_leased_idx').on(t.leaseExpiresAt).where(sql`state = 'LEASED'`),
    index('external_tasks_instance_idx').on(t.processInstanceId),
  ],
);

/** Idempotency of completeTask/failTask per (task, attempt, operation): a re-sent report gets this back. */
export const taskReports = pgTable(
  'task_reports',
  {
    taskId: uuid('task_id')
      .notNull()
      .references(() => externalTasks.id),
    attempt: integer('attempt').notNull(),
    operation: text('operation').$type<'complete' | 'fail'>().notNull(),
    requestSha256: text('request_sha256').notNull(),
    outcome: jsonb('outcome').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.attempt, t.operation] })],
);

/** The step journal (SPEC §4): (task, attempt, sequence). Payloads are encrypted; digests are not. */
export const steps = pgTable(
  'steps',
  {
    taskId: uuid('task_id')
      .notNull()
      .references(() => externalTasks.id),
    attempt: integer('attempt').notNull(),
    sequence: integer('sequence').notNull(),
    kind: text('kind').$type<'MODEL_CALL' | 'TOOL_CALL'>().notNull(),
    state: text('state')
      .$type<'PROPOSED' | 'APPROVED' | 'REJECTED' | 'STARTED' | 'COMPLETED' | 'FAILED' | 'OUTCOME_UNKNOWN'>()
      .notNull(),
    toolRef: text('tool_ref'),
    /** the frozen policy of the tool (read / write / approval_required); null for model calls */
    policy: text('policy').$type<'read' | 'write' | 'approval_required'>(),
    model: text('model'),
    digest: text('digest').notNull(),
    /** AES-256-GCM sealed JSON of the request / response / error */
    requestEnc: text('request_enc').notNull(),
    responseEnc: text('response_enc'),
    errorEnc: text('error_enc'),
    keyId: text('key_id').notNull(),
    idempotencyKey: text('idempotency_key'),
    comment: text('comment'),
    reused: boolean('reused').notNull().default(false),
    usage: jsonb('usage'),
    costUsd: doublePrecision('cost_usd'),
    approvalId: uuid('approval_id'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.attempt, t.sequence] })],
);

/** A person's decision on a proposed call (SPEC §5); multi-level rules keep several levels here. */
export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    processInstanceId: uuid('process_instance_id')
      .notNull()
      .references(() => processInstances.id),
    taskId: uuid('task_id')
      .notNull()
      .references(() => externalTasks.id),
    attempt: integer('attempt').notNull(),
    sequence: integer('sequence').notNull(),
    nodeId: text('node_id').notNull(),
    toolRef: text('tool_ref').notNull(),
    model: text('model'),
    state: text('state').$type<'PENDING' | 'APPROVED' | 'REJECTED' | 'RETIRED'>().notNull(),
    /** digest of the proposal as it stands (changes when an approver edits the arguments) */
    digest: text('digest').notNull(),
    /** the arguments (full, encrypted); the approver's view is redacted at read time */
    argumentsEnc: text('arguments_enc').notNull(),
    keyId: text('key_id').notNull(),
    candidateGroups: text('candidate_groups').array().notNull(),
    /** for multi-level rules: the groups of each level; level index is `currentLevel` */
    levels: jsonb('levels').$type<string[][]>().notNull(),
    currentLevel: integer('current_level').notNull().default(0),
    /** bumped when an approver edits the arguments (approve with changes); decisions keep each version */
    proposalVersion: integer('proposal_version').notNull().default(1),
    slaDueAt: ts('sla_due_at'),
    escalated: boolean('escalated').notNull().default(false),
    escalatedAt: ts('escalated_at'),
    decidedBy: uuid('decided_by'),
    decidedByName: text('decided_by_name'),
    decidedAt: ts('decided_at'),
    comment: text('comment'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('approvals_step_uq').on(t.taskId, t.attempt, t.sequence),
    index('approvals_project_state_idx').on(t.projectId, t.state, t.createdAt),
    index('approvals_sla_idx').on(t.slaDueAt).where(sql`state = 'PENDING' AND escalated = false`),
  ],
);

/** Every decision attempt, winners and losers (ALREADY_DECIDED is recorded too). */
export const approvalDecisions = pgTable(
  'approval_decisions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    approvalId: uuid('approval_id')
      .notNull()
      .references(() => approvals.id),
    level: integer('level').notNull(),
    principalId: uuid('principal_id').notNull(),
    principalName: text('principal_name').notNull(),
    decision: text('decision').$type<'APPROVE' | 'REJECT'>().notNull(),
    digest: text('digest').notNull(),
    /** set when the approver edited the arguments: the digest of the edited proposal */
    editedDigest: text('edited_digest'),
    editedArgumentsEnc: text('edited_arguments_enc'),
    comment: text('comment'),
    /** ACCEPTED, or the refusal code (ALREADY_DECIDED, STALE_DIGEST, …) */
    outcome: text('outcome').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('approval_decisions_approval_idx').on(t.approvalId, t.createdAt)],
);

export const incidents = pgTable(
  'incidents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id').references(() => projects.id),
    type: text('type').notNull(),
    state: text('state').$type<'OPEN' | 'RESOLVED'>().notNull().default('OPEN'),
    processInstanceId: uuid('process_instance_id'),
    taskId: uuid('task_id'),
    attempt: integer('attempt'),
    sequence: integer('sequence'),
    workerId: text('worker_id'),
    message: text('message').notNull(),
    resolution: jsonb('resolution'),
    resolvedBy: uuid('resolved_by'),
    resolvedAt: ts('resolved_at'),
    createdAt: createdAt(),
  },
  (t) => [index('incidents_project_state_idx').on(t.projectId, t.state, t.createdAt)],
);

/** Registered workers and their health (SPEC §6). */
export const workers = pgTable(
  'workers',
  {
    principalId: uuid('principal_id').notNull(),
    workerId: text('worker_id').notNull(),
    projectId: text('project_id'),
    topics: text('topics').array().notNull().default(sql`'{}'`),
    models: text('models').array().notNull().default(sql`'{}'`),
    lastHeartbeatAt: ts('last_heartbeat_at'),
    lastRejectionAt: ts('last_rejection_at'),
    lastRejectionReason: text('last_rejection_reason'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    registeredAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.principalId, t.workerId] })],
);

export const userTasks = pgTable(
  'user_tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    processInstanceId: uuid('process_instance_id')
      .notNull()
      .references(() => processInstances.id),
    nodeId: text('node_id').notNull(),
    candidateGroups: text('candidate_groups').array().notNull(),
    state: text('state').$type<'OPEN' | 'COMPLETED' | 'CANCELLED'>().notNull(),
    completedBy: uuid('completed_by'),
    completedAt: ts('completed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('user_tasks_instance_idx').on(t.processInstanceId)],
);

/**
 * Append-only, hash-chained per instance: a trigger (custom migration) assigns `seq`, `prev_hash` and
 * `hash = sha256(prev_hash || canonical(row))`, serialised per instance through `history_heads`.
 */
export const history = pgTable(
  'history',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    projectId: text('project_id').notNull(),
    processInstanceId: uuid('process_instance_id').notNull(),
    seq: integer('seq').notNull(),
    eventType: text('event_type').notNull(),
    actor: text('actor').notNull(),
    at: ts('at').notNull().defaultNow(),
    taskId: uuid('task_id'),
    attempt: integer('attempt'),
    sequence: integer('sequence'),
    approvalId: uuid('approval_id'),
    incidentId: uuid('incident_id'),
    data: jsonb('data').notNull().default({}),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [uniqueIndex('history_instance_seq_uq').on(t.processInstanceId, t.seq)],
);

/** The chain's head per instance: the last seq and hash (and the hash before it, returned to the trigger). */
export const historyHeads = pgTable('history_heads', {
  processInstanceId: uuid('process_instance_id').primaryKey(),
  seq: integer('seq').notNull().default(0),
  hash: text('hash').notNull().default(''),
  prevHash: text('prev_hash').notNull().default(''),
});

/** Engine-side prices per million tokens; the row in force at the time of a call prices it. */
export const modelPrices = pgTable(
  'model_prices',
  {
    model: text('model').notNull(),
    effectiveFrom: ts('effective_from').notNull(),
    inputPerMTokUsd: doublePrecision('input_per_mtok_usd').notNull(),
    outputPerMTokUsd: doublePrecision('output_per_mtok_usd').notNull(),
  },
  (t) => [primaryKey({ columns: [t.model, t.effectiveFrom] })],
);

/** Durable background jobs (CHILD_DONE, webhook deliveries), deduplicated by `dedupe_key`. */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    payload: jsonb('payload').notNull(),
    state: text('state').$type<'PENDING' | 'DONE' | 'FAILED'>().notNull().default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    runAt: ts('run_at').notNull().defaultNow(),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('jobs_dedupe_uq').on(t.dedupeKey),
    index('jobs_pending_idx').on(t.runAt).where(sql`state = 'PENDING'`),
  ],
);

/**
 * Integrator webhooks: a subscription names a project, a URL and the events it wants; its signing secret
 * is sealed like every other secret (key_id names the key).
 */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    secretEnc: text('secret_enc').notNull(),
    keyId: text('key_id').notNull(),
    active: boolean('active').notNull().default(true),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
  },
  (t) => [index('webhook_subscriptions_project_idx').on(t.projectId).where(sql`active`)],
);

/**
 * The transactional outbox of webhooks: rows are inserted by `notify()` in the transaction of the event,
 * claimed by any engine process (FOR UPDATE SKIP LOCKED) and sent outside any transaction.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    subscriptionId: uuid('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    /** one id per event, shared by every subscription it is delivered to; receivers dedupe on it */
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    state: text('state').$type<'PENDING' | 'DELIVERED' | 'FAILED'>().notNull().default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`state = 'PENDING'`),
    index('webhook_deliveries_subscription_idx').on(t.subscriptionId, t.createdAt),
  ],
);

export type Principal = typeof principals.$inferSelect;
export type ExternalTaskRow = typeof externalTasks.$inferSelect;
export type StepRow = typeof steps.$inferSelect;
export type ApprovalRow = typeof approvals.$inferSelect;
export type ProcessInstanceRow = typeof processInstances.$inferSelect;
export type IncidentRow = typeof incidents.$inferSelect;
export type HistoryRow = typeof history.$inferSelect;
export type WorkerRow = typeof workers.$inferSelect;
export type UserTaskRow = typeof userTasks.$inferSelect;
export type DefinitionRow = typeof definitions.$inferSelect;
export type WebhookSubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
