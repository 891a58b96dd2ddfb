/** Incidents: what needs a person. */
import { index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
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
    createdAt: createdAt(),
  },
  (t) => [index('incidents_project_state_idx').on(t.projectId, t.state, t.createdAt)],
);

export type IncidentRow = typeof incidents.$inferSelect;
