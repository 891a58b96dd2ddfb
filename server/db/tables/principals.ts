/** Who calls the API. */
import { sql } from 'drizzle-orm';
import { pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns.js';
import { projects } from './projects.js';

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

export type Principal = typeof principals.$inferSelect;
