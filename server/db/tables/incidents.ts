/** Incidents: what needs a person. */
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { IncidentResolution } from '../../shared/types.js';
import { createdAt, ts } from './columns.js';
import { projects } from './projects.js';

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
    resolution: jsonb('resolution').$type<IncidentResolution>(),
    resolvedBy: uuid('resolved_by'),
    resolvedAt: ts('resolved_at'),
    /** how many times the condition was seen while this incident was open (FETCH_REJECTED) */
    count: integer('count').notNull().default(1),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    /** what makes a repeat the same incident; unique among OPEN incidents (null: never merged) */
    dedupeKey: text('dedupe_key'),
    createdAt: createdAt(),
  },
  (t) => [
    index('incidents_project_state_idx').on(t.projectId, t.state, t.createdAt),
    uniqueIndex('incidents_open_dedupe_uq')
      .on(t.dedupeKey)
      .where(sql`${t.state} = 'OPEN' AND ${t.dedupeKey} IS NOT NULL`),
  ],
);

export type IncidentRow = typeof incidents.$inferSelect;
