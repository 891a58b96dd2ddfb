import { sql } from 'drizzle-orm';
import { integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';

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

export type WorkerRow = typeof workers.$inferSelect;
