/**
 * Principals and tokens. A token is 32 random bytes shown once; only its SHA-256 is stored, and lookups
 * go by that hash, so no comparison ever touches a stored secret. The bootstrap ABADA_ADMIN_TOKEN is
 * compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { principals, projects } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { sha256Hex } from '../../shared/canonical.js';
import {
  type Actor,
  type EngineContext,
  type PrincipalKind,
  requireAdmin,
  systemAdmin,
} from '../common/index.js';
import { transaction } from '../../db/pg.js';
import { identityCache } from './cache.js';
import { claimClientId, clientIdErrors } from './clients.js';
import {
  BOOTSTRAP_ADMIN_ID,
  actorOf,
  membershipErrors,
  principalView,
  recordPrincipalEvent,
  refuseInvalid,
  refused,
} from './views.js';

/** The token of an `Authorization: Bearer <token>` value, or null. */
export function bearerToken(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^Bearer\s+(\S+)$/i.exec(value.trim());
  return m ? m[1] : null;
}

export function newToken(): string {
  return `abada_${randomBytes(32).toString('base64url')}`;
}

/** Compares two secrets in constant time (hashing first hides their lengths too). */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(sha256Hex(a), 'hex'), Buffer.from(sha256Hex(b), 'hex'));
}

let adminHashOf: { token: string; hash: Buffer } | null = null;
/** SHA-256 of the bootstrap admin token (kept for the last configured value), or null without one. */
function adminTokenHash(adminToken: string | null): Buffer | null {
  if (!adminToken) return null;
  if (adminHashOf?.token !== adminToken)
    adminHashOf = { token: adminToken, hash: Buffer.from(sha256Hex(adminToken), 'hex') };
  return adminHashOf.hash;
}

/**
 * Resolves a bearer token: the actor, or null with `refusal` saying why when the caller can act on it
 * (a disabled principal's token). Identities are cached per process (cache.ts); the cache is dropped on
 * every engine when a principal changes, so a disabled principal's token is refused at once.
 */
export async function identify(ctx: EngineContext, token: string | null | undefined) {
  if (!token) return refused(null);
  // one hash serves the admin comparison (hash against hash, in constant time) and the lookup
  const hash = sha256Hex(token);
  const adminHash = adminTokenHash(ctx.config.adminToken);
  if (adminHash && timingSafeEqual(Buffer.from(hash, 'hex'), adminHash)) {
    return { actor: systemAdmin(BOOTSTRAP_ADMIN_ID, 'bootstrap-admin', 'default'), refusal: null };
  }
  return identityCache(ctx).resolve(hash, async () => {
    const [p] = await ctx.db.select().from(principals).where(eq(principals.tokenHash, hash)).limit(1);
    // unknown tokens are not cached: a token created a moment ago works at once
    if (!p) return refused(null);
    if (p.disabledAt) {
      return refused(
        `The principal "${p.name}" was disabled on ${p.disabledAt.toISOString()}; its tokens no longer work. Ask an admin for a new principal.`,
      );
    }
    return { actor: actorOf(p), refusal: null };
  });
}

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
