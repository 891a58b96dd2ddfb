import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, references, ts } from './columns.js';
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
    /**
     * A person who signs in with the OpenID Provider (SPEC §12) is matched by issuer + subject; their
     * groups (and admin rights) are the provider's. Null for principals created by createPrincipal.
     */
    oidcIssuer: text('oidc_issuer'),
    oidcSubject: text('oidc_subject'),
    /**
     * A worker that signs in with the OpenID Provider's client credentials (SPEC §15.1): the provider's
     * client id its tokens carry (`client_id`, equal to `sub`). Null for every other principal.
     */
    oidcClientId: text('oidc_client_id'),
  },
  (t) => [
    uniqueIndex('principals_token_hash_uq').on(t.tokenHash),
    uniqueIndex('principals_oidc_uq').on(t.oidcIssuer, t.oidcSubject).where(sql`${t.oidcIssuer} is not null`),
    uniqueIndex('principals_oidc_client_uq').on(t.oidcClientId).where(sql`${t.oidcClientId} is not null`),
  ],
);

export type Principal = typeof principals.$inferSelect;

/** SIGNED_IN: created or matched at a sign-in; GROUPS_REFRESHED: the provider's groups changed them. */
export type PrincipalAction =
  | 'CREATED'
  | 'UPDATED'
  | 'DISABLED'
  | 'TOKEN_ROTATED'
  | 'SIGNED_IN'
  | 'GROUPS_REFRESHED';

/**
 * What admins did to principals, append-only, one row per change with the admin who did it (history's
 * hash chain is per process instance, so principals keep their own). Never holds a token or its hash.
 */
export const principalEvents = pgTable(
  'principal_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    principalId: references('principal_id', () => principals.id),
    /** the principal's project at the time (null = a global worker) */
    projectId: text('project_id'),
    action: text('action').$type<PrincipalAction>().notNull(),
    /** the admin's principal id (the bootstrap admin's fixed id when ABADA_ADMIN_TOKEN did it) */
    actorId: uuid('actor_id').notNull(),
    actorName: text('actor_name').notNull(),
    /** { groups, topics } before and after an update; null for the other actions */
    before: jsonb('before').$type<{ groups: string[]; topics: string[] }>(),
    after: jsonb('after').$type<{ groups: string[]; topics: string[] }>(),
    createdAt: createdAt(),
  },
  (t) => [index('principal_events_principal_idx').on(t.principalId, t.createdAt)],
);
