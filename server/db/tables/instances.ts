/** Process instances, their user tasks, and the durable jobs that move them (CHILD_DONE). */
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { JsonObject } from '../../shared/types.js';
import { createdAt, projectId, references, ts } from './columns.js';
import { definitions } from './definitions.js';

export const processInstances = pgTable(
  'process_instances',
  {
    // time-ordered (UUIDv7, migration 0016): an instance's history rows and chain head sit with recent ones
    id: uuid('id').primaryKey().default(sql`abada_uuid_v7()`),
    projectId: projectId(),
    definitionId: references('definition_id', () => definitions.id),
    key: text('key').notNull(),
    version: integer('version').notNull(),
    state: text('state').$type<'ACTIVE' | 'SUSPENDED' | 'COMPLETED' | 'CANCELLED' | 'FAILED'>().notNull(),
    currentNodeId: text('current_node_id'),
    variables: jsonb('variables').$type<JsonObject>().notNull().default({}),
    businessKey: text('business_key'),
    startedBy: uuid('started_by'),
    /** delegation: the parent's external task that waits for this child (SPEC §6) */
    parentTaskId: uuid('parent_task_id'),
    parentSequence: integer('parent_sequence'),
    /** the parent's attempt when it delegated: a CHILD_DONE completes that attempt's step only */
    parentAttempt: integer('parent_attempt'),
    depth: integer('depth').notNull().default(0),
    /** W3C traceparent of the instance's trace (docs/tracing.md); null when it started untraced */
    traceparent: text('traceparent'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    index('process_instances_project_state_idx').on(t.projectId, t.state, t.createdAt),
    index('process_instances_parent_task_idx').on(t.parentTaskId),
  ],
);

export const userTasks = pgTable(
  'user_tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: projectId(),
    processInstanceId: references('process_instance_id', () => processInstances.id),
    nodeId: text('node_id').notNull(),
    candidateGroups: text('candidate_groups').array().notNull(),
    state: text('state').$type<'OPEN' | 'COMPLETED' | 'CANCELLED'>().notNull(),
    completedBy: uuid('completed_by'),
    completedAt: ts('completed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('user_tasks_instance_idx').on(t.processInstanceId)],
);

/** Durable background jobs (CHILD_DONE, webhook deliveries), deduplicated by `dedupe_key`. */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    payload: jsonb('payload').$type<JsonObject>().notNull(),
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

export type ProcessInstanceRow = typeof processInstances.$inferSelect;
export type UserTaskRow = typeof userTasks.$inferSelect;
