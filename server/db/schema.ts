/**
 * The whole data model of Abada (SPEC §2–8), one file per concept under tables/, read by the code and by
 * drizzle-kit (drizzle.config.ts). Columns are snake_case in PostgreSQL, camelCase here. What drizzle
 * cannot express (the history chain trigger, the hot table's storage parameters) is in custom migrations.
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
