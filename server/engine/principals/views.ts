/** What the API shows of a principal (never its token or hash), the checks its memberships pass, and its record. */
import { eq } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { principalEvents, principals, type Principal, type PrincipalAction } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { type Actor, type Executor, type PrincipalKind, omit } from '../common/index.js';

export const BOOTSTRAP_ADMIN_ID = '00000000-0000-0000-0000-00000000ad01';

const HIDDEN = ['tokenHash', 'createdBy', 'oidcIssuer', 'oidcSubject'] as const;

export type PrincipalView = Omit<Principal, (typeof HIDDEN)[number] | 'createdAt'> & {
  /** null for the bootstrap admin (ABADA_ADMIN_TOKEN), which has no row */
  createdAt: Date | null;
};

export function principalView(row: Principal): PrincipalView {
  return omit(row, HIDDEN);
}

/** The actor a principal acts as (a token's, a session's, a client's). */
export function actorOf(p: Principal): Actor {
  const { id, kind, name, projectId, groups, topics } = p;
  return { principalId: id, kind, name, projectId, groups, topics };
}

/** An identity that does not act: no actor, and why (null when there is nothing to say). */
export function refused(refusal: string | null): { actor: null; refusal: string | null } {
  return { actor: null, refusal };
}

export function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The caller itself, as `me` shows it (an authenticated actor is enabled). */
export function actorView(actor: Actor): PrincipalView {
  return {
    id: actor.principalId,
    ...omit(actor, ['principalId']),
    oidcClientId: null,
    disabledAt: null,
    createdAt: null,
  };
}

type FieldError = { path: string; message: string };
export const MEMBERSHIP_RE = /^[A-Za-z0-9*][A-Za-z0-9:._*-]{0,99}$/;

/** Workers fetch topics and never decide; humans and admins have groups and fetch nothing. */
export function membershipErrors(kind: PrincipalKind, groups: string[], topics: string[]): FieldError[] {
  const errors: FieldError[] = [];
  if (kind !== 'WORKER' && topics.length > 0) {
    errors.push({ path: 'topics', message: 'Only worker principals fetch topics; leave topics empty.' });
  }
  if (kind === 'WORKER' && groups.length > 0) {
    errors.push({
      path: 'groups',
      message: 'A worker credential never decides approvals; give groups to humans.',
    });
  }
  for (const g of groups)
    if (!MEMBERSHIP_RE.test(g)) errors.push({ path: 'groups', message: `"${g}" is not a valid name.` });
  for (const t of topics)
    if (!MEMBERSHIP_RE.test(t)) errors.push({ path: 'topics', message: `"${t}" is not a valid name.` });
  return errors;
}

export function refuseInvalid(errors: FieldError[], what = 'The principal is invalid; see errors.'): void {
  if (errors.length) throw new EngineError('VALIDATION_FAILED', what, { errors });
}

/** Writes `set` to a principal's row; the row as it is now. */
export async function setPrincipal(ex: Executor, id: string, set: PgUpdateSetSource<typeof principals>) {
  const [row] = await ex.update(principals).set(set).where(eq(principals.id, id)).returning();
  return row;
}

/** Appends one row to the principals' own record (principal_events): what an admin did, never a token. */
export async function recordPrincipalEvent(
  ex: Executor,
  actor: Actor,
  row: Principal,
  action: PrincipalAction,
  change: { before?: Principal; after?: Principal } = {},
): Promise<void> {
  const memberships = (p?: Principal) => (p ? { groups: p.groups, topics: p.topics } : null);
  await ex.insert(principalEvents).values({
    principalId: row.id,
    projectId: row.projectId,
    action,
    actorId: actor.principalId,
    actorName: actor.name,
    before: memberships(change.before),
    after: memberships(change.after),
  });
}
