/**
 * Workers that sign in with the OpenID Provider's client credentials (SPEC §15.1): a client-credentials
 * token of the client a WORKER principal names (`oidcClientId`) acts as that principal. One principal
 * per client id: the check takes a transaction-scoped advisory lock on the id, so two admins naming the
 * same client at once get one principal and one clear refusal (the unique index stays the last word).
 */
import { and, eq, sql } from 'drizzle-orm';
import { principals } from '../../db/schema.js';
import { invalid } from '../../errors.js';
import type { EngineContext, PrincipalKind, Tx } from '../common/index.js';
import { identityCache } from './cache.js';
import { actorOf, refused } from './views.js';

const CLIENT_ID_RE = /^[\x21-\x7e]{1,200}$/;

/** What is wrong with a client id for a principal of `kind` (empty when it is fine). */
export function clientIdErrors(kind: PrincipalKind, clientId: string | null | undefined) {
  if (clientId == null) return [];
  if (kind !== 'WORKER')
    return [{ path: 'oidcClientId', message: 'Only worker principals sign in with client credentials.' }];
  if (!CLIENT_ID_RE.test(clientId))
    return [{ path: 'oidcClientId', message: 'Use the provider’s client id: 1–200 printable characters.' }];
  return [];
}

/** Refuses (VALIDATION_FAILED) a client id another than `self` holds; serialised per id until commit. */
export async function claimClientId(tx: Tx, clientId: string, self: string | null): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`oidc-client:${clientId}`}))`);
  const [holder] = await tx
    .select({ id: principals.id, name: principals.name, disabledAt: principals.disabledAt })
    .from(principals)
    .where(eq(principals.oidcClientId, clientId))
    .limit(1);
  if (!holder || holder.id === self) return;
  throw invalid(
    `The OpenID client "${clientId}" already signs in as the principal "${holder.name}"` +
      (holder.disabledAt ? ' (disabled; disabling is final)' : '') +
      '. Register another client at the provider for this worker, or use that principal.',
    'oidcClientId',
    'already taken',
  );
}

/**
 * The worker a client-credentials token acts as, or why not (no WORKER names the client, or disabled).
 * Cached like a token's identity; the token itself is verified on every request before this is asked.
 */
export async function clientActor(ctx: EngineContext, clientId: string) {
  return identityCache(ctx).resolve(`oidc-client:${clientId}`, async () => {
    const [row] = await ctx.db
      .select()
      .from(principals)
      .where(and(eq(principals.oidcClientId, clientId), eq(principals.kind, 'WORKER')))
      .limit(1);
    if (!row)
      return refused(
        `No worker principal signs in as the OpenID client "${clientId}": an admin sets it as the ` +
          'worker’s oidcClientId (createPrincipal, updatePrincipal or ABADA_FIRST_PARTY_WORKERS).',
      );
    if (row.disabledAt)
      return refused(
        `The worker principal "${row.name}" was disabled on ${row.disabledAt.toISOString()}; its client credentials no longer work.`,
      );
    return { actor: actorOf(row), refusal: null };
  });
}
