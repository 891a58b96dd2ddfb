/**
 * Principals managed by the organisation's OpenID Provider (SPEC §12): a person is matched by issuer +
 * subject and created at the first sign-in; the groups and admin rights (ABADA_OIDC_ADMIN_GROUP) are the
 * provider's, written at every sign-in and refresh, recorded and announced like an admin's update.
 */
import { and, eq } from 'drizzle-orm';
import { principals, type Principal } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { sha256Hex } from '../../shared/canonical.js';
import type { Actor, EngineContext, Tx } from '../common/index.js';
import { notify } from '../events/index.js';
import { newToken } from './principals.js';
import { actorOf, MEMBERSHIP_RE, recordPrincipalEvent, refused, sameList, setPrincipal } from './views.js';

/** Who the provider says signed in, already reduced to what Abada keeps. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  name: string;
  groups: string[];
  admin: boolean;
}

/** The default project: provider-managed people belong to it. */
const PROJECT = 'default';
const NAME_MAX = 100;

/** A principal name from the provider's claims (preferred_username, email, name, else the subject). */
export function principalName(claims: Record<string, unknown>, subject: string): string {
  const pick = [claims.preferred_username, claims.email, claims.name].find(
    (v): v is string => typeof v === 'string' && v.trim() !== '',
  );
  const raw = (pick ?? subject).trim();
  const cleaned = raw.replace(/[^A-Za-z0-9 ._@-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return (cleaned || `user-${sha256Hex(subject).slice(0, 12)}`).slice(0, NAME_MAX);
}

/**
 * Groups from the provider's claim: a list of strings (or one string). Keycloak's full group paths
 * lose their leading "/"; names Abada cannot store (spaces, other characters) are left out.
 */
export function groupsFromClaim(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  const out = new Set<string>();
  for (const v of list) {
    if (typeof v !== 'string') continue;
    const g = v.replace(/^\/+/, '').trim();
    if (MEMBERSHIP_RE.test(g)) out.add(g);
  }
  return [...out];
}

/** The provider acting on a principal, as its record names it. */
function recordedAs(row: Principal): Actor {
  return { ...actorOf(row), name: `openid:${row.oidcIssuer ?? ''}`.slice(0, 200), groups: [], topics: [] };
}

const disabledRefusal = (row: Principal) =>
  new EngineError(
    'UNAUTHENTICATED',
    `The principal "${row.name}" was disabled on ${row.disabledAt?.toISOString()}; it can no longer sign ` +
      'in. Ask an admin of Abada.',
  );

/**
 * Matches (locking the row) or creates a provider identity's principal and writes its changed name, groups
 * and rights. A disabled principal is refused (UNAUTHENTICATED): signing in again does not bring it back.
 */
export async function upsertProviderPrincipal(tx: Tx, who: ProviderIdentity): Promise<Principal> {
  const [existing] = await tx
    .select()
    .from(principals)
    .where(and(eq(principals.oidcIssuer, who.issuer), eq(principals.oidcSubject, who.subject)))
    .for('update');
  if (!existing) {
    const [created] = await tx
      .insert(principals)
      .values({
        kind: who.admin ? 'ADMIN' : 'HUMAN',
        name: who.name,
        groups: who.groups,
        topics: [],
        projectId: PROJECT,
        // nobody knows this token: the person authenticates with the provider (an admin may rotate it)
        tokenHash: sha256Hex(newToken()),
        oidcIssuer: who.issuer,
        oidcSubject: who.subject,
      })
      .returning();
    await recordPrincipalEvent(tx, recordedAs(created), created, 'SIGNED_IN', { after: created });
    return created;
  }
  return applyProviderChanges(tx, existing, who);
}

/** Writes the provider's view of an enabled principal; records and announces a change of groups or rights. */
async function applyProviderChanges(tx: Tx, before: Principal, who: ProviderIdentity) {
  if (before.disabledAt) throw disabledRefusal(before);
  const kind = who.admin ? 'ADMIN' : 'HUMAN';
  if (before.kind === kind && before.name === who.name && sameList(before.groups, who.groups)) return before;
  const after = await setPrincipal(tx, before.id, { kind, name: who.name, groups: who.groups });
  await recordPrincipalEvent(tx, recordedAs(after), after, 'GROUPS_REFRESHED', { before, after });
  await notify(tx, { type: 'principal', principalId: after.id, change: 'updated' });
  return after;
}

/** Re-applies the provider's identity to a known principal (a session refresh). */
export async function refreshProviderPrincipal(tx: Tx, principalId: string, who: ProviderIdentity) {
  const [row] = await tx.select().from(principals).where(eq(principals.id, principalId)).for('update');
  return applyProviderChanges(tx, row, who);
}

/** The actor of a provider's access token (issuer + subject), or why not: never signed in, or disabled. */
export async function providerActor(ctx: EngineContext, issuer: string, subject: string) {
  const [row] = await ctx.db
    .select()
    .from(principals)
    .where(and(eq(principals.oidcIssuer, issuer), eq(principals.oidcSubject, subject)))
    .limit(1);
  if (!row)
    return refused(
      'No Abada principal for this access token’s subject: sign in to the dashboard once first.',
    );
  if (row.disabledAt) return refused(disabledRefusal(row).message);
  return { actor: actorOf(row), refusal: null };
}
