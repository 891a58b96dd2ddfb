import {
  bigint,
  bigserial,
  integer,
  jsonb,
  pgTable,
  pgView,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { JsonObject } from '../../shared/types.js';
import { ts } from './columns.js';

/** An event's columns, the same in the table (a row's own event) and in the view (every event). */
const eventColumns = () => ({
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
  hash: text('hash').notNull(),
});

/**
 * Append-only, hash-chained per instance: a trigger (custom migration) assigns `seq`, `prev_hash` and
 * `hash = sha256(prev_hash || canonical(row))`, serialised per instance through `history_heads`.
 */
export const history = pgTable(
  'history',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    ...eventColumns(),
    /**
     * The later events of the row's commit for this instance, in order (null when the row has one):
     * each with its type, actor, ids and data; its time is the row's. Chained with the row (SPEC §8).
     */
    events: jsonb('events').$type<JsonObject[]>(),
    prevHash: text('prev_hash').notNull(),
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

/**
 * One row per event (migration 0024): each history row's own event (`idx` 0), then the events it carries
 * (`idx` 1, 2, …), each with the row's `seq`, time and hash. What readers list; the chain is the table's.
 */
export const historyEvents = pgView('history_events', {
  id: bigint('id', { mode: 'number' }).notNull(),
  ...eventColumns(),
  idx: integer('idx').notNull(),
}).existing();

export type HistoryEventRow = typeof historyEvents.$inferSelect;
