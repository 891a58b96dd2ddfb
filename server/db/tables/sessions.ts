/** Dashboard sessions of people signed in with the OpenID Provider (SPEC §12). */
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, references, ts } from './columns.js';
import { principals } from './principals.js';

/**
 * One row per signed-in browser. The cookie carries a random secret; only its SHA-256 is stored, like
 * API tokens. `expires_at` is the absolute lifetime, `last_seen_at` drives the idle one, `refreshed_at`
 * says when the provider last confirmed the person's groups. The provider's tokens (refresh token,
 * access token, ID token for logout) are sealed with the engine's encryption key.
 */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    secretHash: text('secret_hash').notNull(),
    /** sent back in the x-abada-csrf header (or the csrf form field) by requests that change state */
    csrfToken: text('csrf_token').notNull(),
    principalId: references('principal_id', () => principals.id),
    /** sealed JSON { refreshToken, accessToken, idToken } from the provider */
    providerTokens: text('provider_tokens').notNull(),
    createdAt: createdAt(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    refreshedAt: ts('refreshed_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    endedAt: ts('ended_at'),
    /** SIGNED_OUT, IDLE, EXPIRED, DISABLED, REFRESH_FAILED */
    endReason: text('end_reason'),
  },
  (t) => [
    uniqueIndex('sessions_secret_hash_uq').on(t.secretHash),
    index('sessions_principal_idx').on(t.principalId),
  ],
);

export type SessionRow = typeof sessions.$inferSelect;
