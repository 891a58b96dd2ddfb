/**
 * The whole data model of Abada (SPEC §2–8), one file per concept under tables/. Columns are snake_case
 * in PostgreSQL, camelCase here; jsonb columns carry the types of server/shared/types.ts. Hand-written
 * SQL that drizzle cannot express (the history hash-chain trigger, storage parameters of the hot
 * external_tasks table) lives in the custom migrations under drizzle/. This file is the entry both the
 * code (`../db/schema.js`) and drizzle-kit (drizzle.config.ts) read.
 */
export * from './tables/approvals.js';
export * from './tables/definitions.js';
export * from './tables/history.js';
export * from './tables/incidents.js';
export * from './tables/instances.js';
export * from './tables/prices.js';
export * from './tables/principals.js';
export * from './tables/sessions.js';
export * from './tables/projects.js';
export * from './tables/steps.js';
export * from './tables/stream.js';
export * from './tables/tasks.js';
export * from './tables/webhooks.js';
export * from './tables/workers.js';
