/** Column helpers every table shares: timestamps with time zone, and the owning project. */
import { type ReferenceConfig, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { projects } from './projects.js';

export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
export const createdAt = () => ts('created_at').notNull().defaultNow();

/** The project a row belongs to (required, a foreign key to projects). */
export const projectId = () =>
  text('project_id')
    .notNull()
    .references(() => projects.id);

/** A required uuid column referencing another table's row (a foreign key). */
export const references = (name: string, to: ReferenceConfig['ref'], actions?: ReferenceConfig['actions']) =>
  uuid(name).notNull().references(to, actions);
