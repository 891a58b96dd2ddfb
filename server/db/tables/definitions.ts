import { integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { FrozenProcess, ToolServerSpec } from '../../shared/types.js';
import { projectId, ts } from './columns.js';

/** The current spec of each tool server; definitions freeze what they use at deployment. */
export const toolServers = pgTable(
  'tool_servers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: projectId(),
    name: text('name').notNull(),
    spec: jsonb('spec').$type<ToolServerSpec>().notNull(),
    version: integer('version').notNull().default(1),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('tool_servers_project_name_uq').on(t.projectId, t.name)],
);

/** Secrets for tool servers, AES-256-GCM encrypted; key_id names the key that sealed the row. */
export const credentials = pgTable(
  'credentials',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: projectId(),
    name: text('name').notNull(),
    secretEnc: text('secret_enc').notNull(),
    keyId: text('key_id').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('credentials_project_name_uq').on(t.projectId, t.name)],
);

/** One row per deployed version of a process; `spec` is the FrozenProcess (bindings included). */
export const definitions = pgTable(
  'definitions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: projectId(),
    key: text('key').notNull(),
    version: integer('version').notNull(),
    spec: jsonb('spec').$type<FrozenProcess>().notNull(),
    source: text('source').notNull(),
    sourceSha256: text('source_sha256').notNull(),
    deployedBy: uuid('deployed_by'),
    deployedAt: ts('deployed_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('definitions_project_key_version_uq').on(t.projectId, t.key, t.version)],
);

export type DefinitionRow = typeof definitions.$inferSelect;
