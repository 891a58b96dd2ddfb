/**
 * The event stream (SPEC §13): every approval and incident event, in commit order. `notify()` inserts a
 * row without position in the change's transaction; a deferred trigger (migration 0011) numbers the
 * transaction's rows from `stream_head` as it commits, stamps `committed_at` and sends the NOTIFYs. The
 * head row stays locked until COMMIT ends, so a later commit never gets a smaller position and there are
 * no holes. Rows older than ABADA_EVENT_RETENTION_HOURS are pruned by position prefix.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { ts } from './columns.js';

/** What the NOTIFY of a stream event carries (plus its position), and what a replay reads back. */
export type StreamPayload =
  | {
      type: 'approval';
      approvalId: string;
      projectId: string;
      change: 'opened' | 'decided' | 'escalated' | 'retired' | 'revoked' | 'expired' | 'voided';
    }
  | { type: 'incident'; incidentId: string; projectId: string | null };

export const streamEvents = pgTable(
  'stream_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** null until the inserting transaction commits (set by the deferred trigger) */
    position: bigint('position', { mode: 'number' }),
    type: text('type').$type<StreamPayload['type']>().notNull(),
    change: text('change').notNull(),
    objectId: uuid('object_id').notNull(),
    /** null: an incident of no project (a global worker's), seen only by global principals */
    projectId: text('project_id'),
    payload: jsonb('payload').$type<StreamPayload>().notNull(),
    committedAt: ts('committed_at'),
  },
  (t) => [
    uniqueIndex('stream_events_position_idx').on(t.position),
    // a replay page of one type walks this in position order and stops after a page of matches
    index('stream_events_type_idx').on(t.type, t.position),
    index('stream_events_object_idx').on(t.objectId, t.position),
    index('stream_events_committed_idx').on(t.committedAt),
  ],
);

/** One row: the last position handed out (the counter the deferred trigger updates last). */
export const streamHead = pgTable(
  'stream_head',
  {
    id: integer('id').primaryKey().default(1),
    position: bigint('position', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('stream_head_one_row', sql`${t.id} = 1`)],
);
