/** The hash-chained history of each instance. */
import { bigserial, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { JsonObject } from '../../shared/types.js';
import { ts } from './columns.js';

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
    data: jsonb('data').$type<JsonObject>().notNull().default({}),
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

export type HistoryRow = typeof history.$inferSelect;
