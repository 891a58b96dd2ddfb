/**
 * Principals' lifecycle (SPEC §11), admins only: an admin manages its project's principals, the bootstrap
 * admin every project's and the global workers. Each change is one transaction that locks the row, appends
 * to principal_events and NOTIFYs, so every engine drops the cached identity (and, on disable and rotate,
 * closes its graphql-ws connections) at once. Disabling is final.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { principals, type Principal, projects, sessions } from '../../db/schema.js';
import { EngineError, invalid, notFound } from '../../errors.js';
import {
  type Actor,
  type EngineContext,
  type PrincipalKind,
  type Tx,
  cursorCondition,
  cursorOrder,
  isUuid,
  page,
  pageSize,
  requireAdmin,
} from '../common/index.js';
import { notify } from '../events/index.js';
import { identityCache } from './cache.js';
import { clientIdErrors, claimClientId } from './clients.js';
import { newToken } from './principals.js';
import { endSessionsOf } from './sessions.js';
import { sha256Hex } from '../../shared/canonical.js';
import {
  BOOTSTRAP_ADMIN_ID,
  membershipErrors,
  type PrincipalView,
  principalView,
  recordPrincipalEvent,
  refuseInvalid,
  sameList,
  setPrincipal,
} from './views.js';
import { transaction } from '../../db/pg.js';

export interface CreatePrincipalInput {
  kind: PrincipalKind;
  name: string;
  groups?: string[] | null;
  topics?: string[] | null;
  /** null / omitted = the admin's project; the string "*" (workers only) = a global worker */
  projectId?: string | null;
  /** workers only: the OpenID Provider's client whose client-credentials tokens act as this worker */
  oidcClientId?: string | null;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$/;

/** Creates a principal (admins only) and returns its token, which is never shown again. */
export async function createPrincipal(ctx: EngineContext, actor: Actor, input: CreatePrincipalInput) {
  requireAdmin(actor, 'create principals');
  const groups = input.groups ?? [];
  const topics = input.topics ?? [];
  const errors = [
    ...membershipErrors(input.kind, groups, topics),
    ...clientIdErrors(input.kind, input.oidcClientId),
  ];
  if (!NAME_RE.test(input.name))
    errors.unshift({ path: 'name', message: 'Use 1–100 letters, digits, spaces or ._@-' });
  let projectId: string | null = input.projectId ?? actor.projectId;
  if (input.projectId === '*') {
    if (input.kind !== 'WORKER')
      errors.push({ path: 'projectId', message: 'Only workers may be global ("*").' });
    projectId = null;
  }
  refuseInvalid(errors);
  // The bootstrap admin (ABADA_ADMIN_TOKEN) sets up projects; other admins stay inside their own.
  if (actor.principalId !== BOOTSTRAP_ADMIN_ID && projectId !== actor.projectId) {
    throw new EngineError('FORBIDDEN', 'An admin can create principals only in its own project.');
  }
  const token = newToken();
  const row = await transaction(ctx.db, async (tx) => {
    if (projectId !== null) {
      await tx.insert(projects).values({ id: projectId, name: projectId }).onConflictDoNothing();
    }
    if (input.oidcClientId) await claimClientId(tx, input.oidcClientId, null);
    const [created] = await tx
      .insert(principals)
      .values({
        kind: input.kind,
        name: input.name,
        groups,
        topics,
        projectId,
        tokenHash: sha256Hex(token),
        createdBy: actor.principalId,
        oidcClientId: input.oidcClientId ?? null,
      })
      .returning();
    await recordPrincipalEvent(tx, actor, created, 'CREATED');
    return created;
  });
  return { principal: principalView(row), token };
}

/** The principals an admin may manage: its project's; the bootstrap admin's: all. */
function scope(actor: Actor) {
  return actor.principalId === BOOTSTRAP_ADMIN_ID
    ? undefined
    : eq(principals.projectId, actor.projectId ?? 'default');
}

/** The principals an admin manages, newest first, keyset-paged like every list of the API. */
export async function listPrincipals(
  ctx: EngineContext,
  actor: Actor,
  args: { kind?: PrincipalKind | null; first?: number | null; after?: string | null },
) {
  requireAdmin(actor, 'list principals');
  const first = pageSize(args.first);
  const base = and(scope(actor), args.kind ? eq(principals.kind, args.kind) : undefined);
  const rows = await ctx.db
    .select()
    .from(principals)
    .where(and(base, cursorCondition(principals.createdAt, principals.id, args.after)))
    .orderBy(...cursorOrder(principals.createdAt, principals.id))
    .limit(first + 1);
  const [{ count }] = await ctx.db.select({ count: sql<number>`count(*)::int` }).from(principals).where(base);
  const p = page(rows, first, count);
  return { ...p, edges: p.edges.map((e) => ({ node: principalView(e.node), cursor: e.cursor })) };
}

/**
 * The principal's row, locked, if the admin manages it (else NOT_FOUND: other projects' ids reveal
 * nothing). Disabling an admin first locks every enabled admin of its project, in id order, so two
 * admins disabling each other cannot both succeed (nor deadlock).
 */
async function lockPrincipal(tx: Tx, actor: Actor, id: string, doing: string): Promise<Principal> {
  requireAdmin(actor, doing);
  if (id === BOOTSTRAP_ADMIN_ID) {
    throw new EngineError(
      'FORBIDDEN',
      'The bootstrap admin is the ABADA_ADMIN_TOKEN setting, not a stored principal: change or unset ' +
        'ABADA_ADMIN_TOKEN and restart the engines instead.',
    );
  }
  if (!isUuid(id)) throw notFound('principal', id);
  const [seen] = await tx
    .select({ kind: principals.kind, projectId: principals.projectId })
    .from(principals)
    .where(and(eq(principals.id, id), scope(actor)))
    .limit(1);
  if (!seen) throw notFound('principal', id);
  if (seen.kind === 'ADMIN') await lockEnabledAdmins(tx, seen.projectId);
  const [row] = await tx.select().from(principals).where(eq(principals.id, id)).for('update');
  return row;
}

async function lockEnabledAdmins(tx: Tx, projectId: string | null): Promise<string[]> {
  const rows = await tx
    .select({ id: principals.id })
    .from(principals)
    .where(
      and(
        eq(principals.kind, 'ADMIN'),
        isNull(principals.disabledAt),
        projectId === null ? isNull(principals.projectId) : eq(principals.projectId, projectId),
      ),
    )
    .orderBy(principals.id)
    .for('update');
  return rows.map((r) => r.id);
}

function refuseDisabled(row: Principal): void {
  if (row.disabledAt) {
    throw invalid(
      `The principal "${row.name}" is disabled, and disabling is final; create a new principal instead.`,
      'id',
      'disabled',
    );
  }
}

/** A provider-managed principal's groups are the provider's: changing them here is refused, naming where. */
function refuseProviderGroups(row: Principal, groups: string[] | null | undefined): void {
  if (row.oidcIssuer === null || !groups || sameList(groups, row.groups)) return;
  throw new EngineError(
    'VALIDATION_FAILED',
    `The groups of "${row.name}" come from the OpenID Provider ${row.oidcIssuer}; change them there. ` +
      'Abada picks the change up at the next sign-in or session refresh.',
    { reason: 'PROVIDER_MANAGED', errors: [{ path: 'groups', message: 'managed by the OpenID Provider' }] },
  );
}

/** Runs one change in a transaction, then drops this process's cached identity at once (others hear NOTIFY). */
async function change<T>(ctx: EngineContext, id: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  const result = await transaction(ctx.db, work);
  identityCache(ctx).drop(id);
  return result;
}

export interface UpdatePrincipalInput {
  id: string;
  /** null / omitted = unchanged */
  groups?: string[] | null;
  topics?: string[] | null;
  /** a worker's OpenID client (SPEC §15.1); null / omitted = unchanged, "" = none */
  oidcClientId?: string | null;
}

/** Replaces a principal's groups, topics and/or OpenID client; all in force at once. */
export async function updatePrincipal(ctx: EngineContext, actor: Actor, input: UpdatePrincipalInput) {
  return change(ctx, input.id, async (tx) => {
    const before = await lockPrincipal(tx, actor, input.id, 'update principals');
    refuseDisabled(before);
    refuseProviderGroups(before, input.groups);
    const groups = input.groups ?? before.groups;
    const topics = input.topics ?? before.topics;
    const clientId = input.oidcClientId == null ? before.oidcClientId : input.oidcClientId || null;
    refuseInvalid(
      [...membershipErrors(before.kind, groups, topics), ...clientIdErrors(before.kind, clientId)],
      'The update is invalid; see errors.',
    );
    if (clientId && clientId !== before.oidcClientId) await claimClientId(tx, clientId, before.id);
    const after = await setPrincipal(tx, before.id, { groups, topics, oidcClientId: clientId });
    await recordPrincipalEvent(tx, actor, after, 'UPDATED', { before, after });
    await notify(tx, { type: 'principal', principalId: after.id, change: 'updated' });
    return principalView(after);
  });
}

/**
 * Disables a principal: tokens refused, graphql-ws connections closed on every engine. Refused
 * (VALIDATION_FAILED) for its project's last enabled admin; a disabled principal is returned unchanged.
 */
export async function disablePrincipal(ctx: EngineContext, actor: Actor, id: string): Promise<PrincipalView> {
  return change(ctx, id, async (tx) => {
    const row = await lockPrincipal(tx, actor, id, 'disable principals');
    if (row.disabledAt) return principalView(row);
    if (row.kind === 'ADMIN') {
      const admins = await lockEnabledAdmins(tx, row.projectId);
      if (admins.length <= 1) {
        throw invalid(
          `"${row.name}" is the last enabled admin of project ${row.projectId ?? '*'}; create or keep ` +
            'another admin there before disabling this one.',
          'id',
          'last enabled admin',
        );
      }
    }
    const after = await setPrincipal(tx, row.id, { disabledAt: sql`now()` });
    await recordPrincipalEvent(tx, actor, after, 'DISABLED');
    await endSessionsOf(tx, 'DISABLED', eq(sessions.principalId, after.id));
    await notify(tx, { type: 'principal', principalId: after.id, change: 'disabled' });
    return principalView(after);
  });
}

/** Gives a principal a new token (shown once) and stops the old one everywhere at once. */
export async function rotatePrincipalToken(ctx: EngineContext, actor: Actor, id: string) {
  const token = newToken();
  return change(ctx, id, async (tx) => {
    const row = await lockPrincipal(tx, actor, id, 'rotate tokens');
    refuseDisabled(row);
    const after = await setPrincipal(tx, row.id, { tokenHash: sha256Hex(token) });
    await recordPrincipalEvent(tx, actor, after, 'TOKEN_ROTATED');
    await notify(tx, { type: 'principal', principalId: after.id, change: 'rotated' });
    return { principal: principalView(after), token };
  });
}
