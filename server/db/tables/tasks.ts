import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import type { AgentWork, AttemptMetadata, TaskReportOutcome } from '../../shared/types.js';
import { createdAt, projectId, references, ts } from './columns.js';
import { processInstances } from './instances.js';

/**
 * Agent and service work. Hot table: the claim statement reads it through two partial indexes (OPEN
 * rows by topic and priority, LEASED rows by lease expiry) so that finished rows never slow a fetch.
 */
export const externalTasks = pgTable(
  'external_tasks',
  {
    // time-ordered (UUIDv7, migration 0016): recent rows share index pages, which stay in memory
    id: uuid('id').primaryKey().default(sql`abada_uuid_v7()`),
    projectId: projectId(),
    processInstanceId: references('process_instance_id', () => processInstances.id),
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
    /** the fetchAndLock request that took the current lease: a re-sent fetch gets the same claim back */
    leaseRequestId: text('lease_request_id'),
    /** when the current lease began (a precondition read must be journaled under it, SPEC §11) */
    leasedAt: ts('leased_at'),
    availableAt: ts('available_at').notNull().defaultNow(),
    /** lease expiries on the current attempt (poison-work protection) */
    leaseExpiries: integer('lease_expiries').notNull().default(0),
    /** deferrals on the current attempt (deferTask): past ABADA_MAX_DEFERRALS one counts as a failure */
    deferrals: integer('deferrals').notNull().default(0),
    /** the frozen AgentWork of an agent node (prompt template, inputs, bindings, limits) */
    agentWork: jsonb('agent_work').$type<AgentWork>(),
    metadata: jsonb('metadata').$type<AttemptMetadata>(),
    /**
     * When the node's timeout boundary fires (entered + timeout_minutes; null without one), and which
     * boundary took the token off this task: a task left so is never retried (its node is behind).
     */
    boundaryAt: ts('boundary_at'),
    boundary: text('boundary').$type<'TIMEOUT' | 'FAILURE'>(),
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
    // a re-sent fetch finds its claim by request id (claimedBefore) without reading every live lease
    index('external_tasks_lease_request_idx')
      .on(t.leaseRequestId)
      .where(sql`state = 'LEASED' AND lease_request_id IS NOT NULL`),
    index('external_tasks_instance_idx').on(t.processInstanceId),
    // the timer sweep reads only live tasks that have a boundary
    index('external_tasks_boundary_idx')
      .on(t.boundaryAt)
      .where(
        sql`boundary_at IS NOT NULL AND state IN ('OPEN', 'LEASED', 'AWAITING_APPROVAL', 'AWAITING_CHILD')`,
      ),
  ],
);

/** Idempotency of completeTask/failTask per (task, attempt, operation): a re-sent report gets this back. */
export const taskReports = pgTable(
  'task_reports',
  {
    taskId: references('task_id', () => externalTasks.id),
    attempt: integer('attempt').notNull(),
    operation: text('operation').$type<'complete' | 'fail'>().notNull(),
    requestSha256: text('request_sha256').notNull(),
    outcome: jsonb('outcome').$type<TaskReportOutcome>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.attempt, t.operation] })],
);

export type ExternalTaskRow = typeof externalTasks.$inferSelect;
