/**
 * Principals and tokens. A token is 32 random bytes shown once; only its SHA-256 is stored, and lookups
 * go by that hash, so no comparison ever touches a stored secret. The bootstrap ABADA_ADMIN_TOKEN is
 * compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { principals, projects } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { sha256Hex } from '../../shared/canonical.js';
import type { Actor, EngineContext, PrincipalKind } from '../common/index.js';

export const BOOTSTRAP_ADMIN_ID = '00000000-0000-0000-0000-00000000ad01';

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
  const ha = Buffer.from(sha256Hex(a), 'hex');
  const hb = Buffer.from(sha256Hex(b), 'hex');
  return timingSafeEqual(ha, hb);
}

/** Resolves a bearer token to an actor, or null when it is unknown or disabled. */
export async function authenticate(
  ctx: EngineContext,
  token: string | null | undefined,
): Promise<Actor | null> {
  if (!token) return null;
  if (ctx.config.adminToken && constantTimeEqual(token, ctx.config.adminToken)) {
    return {
      principalId: BOOTSTRAP_ADMIN_ID,
      kind: 'ADMIN',
      name: 'bootstrap-admin',
      projectId: 'default',
      groups: [],
      topics: [],
    };
  }
  const hash = sha256Hex(token);
  const now = Date.now();
  const hit = actorCache.get(hash);
  if (hit && hit.until > now) return hit.actor;
  const rows = await ctx.db
    .select()
    .from(principals)
    .where(and(eq(principals.tokenHash, hash), isNull(principals.disabledAt)))
    .limit(1);
  const p = rows[0];
  if (!p) return null; // unknown tokens are not cached: a token created a moment ago works at once
  const actor: Actor = {
    principalId: p.id,
    kind: p.kind,
    name: p.name,
    projectId: p.projectId,
    groups: p.groups,
    topics: p.topics,
  };
  if (actorCache.size > 10_000) actorCache.clear();
  actorCache.set(hash, { actor, until: now + ACTOR_CACHE_MS });
  return actor;
}

/**
 * Every request authenticates; caching the principal by token hash for a few seconds saves a round trip
 * per call on the hot paths. A disabled principal is refused within ACTOR_CACHE_MS.
 */
const ACTOR_CACHE_MS = 5_000;
const actorCache = new Map<string, { actor: Actor; until: number }>();

export interface CreatePrincipalInput {
  kind: PrincipalKind;
  name: string;
  groups?: string[] | null;
  topics?: string[] | null;
  /** null / omitted = the admin's project; the string "*" (workers only) = a global worker */
  projectId?: string | null;
}

export interface PrincipalView {
  id: string;
  kind: PrincipalKind;
  name: string;
  projectId: string | null;
  groups: string[];
  topics: string[];
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$/;

/** Creates a principal (admins only) and returns its token, which is never shown again. */
export async function createPrincipal(
  ctx: EngineContext,
  actor: Actor,
  input: CreatePrincipalInput,
): Promise<{ principal: PrincipalView; token: string }> {
  if (actor.kind !== 'ADMIN') throw new EngineError('FORBIDDEN', 'Only an admin can create principals.');
  const errors: { path: string; message: string }[] = [];
  if (!NAME_RE.test(input.name))
    errors.push({ path: 'name', message: 'Use 1–100 letters, digits, spaces or ._@-' });
  const groups = input.groups ?? [];
  const topics = input.topics ?? [];
  if (input.kind !== 'WORKER' && topics.length > 0) {
    errors.push({ path: 'topics', message: 'Only worker principals fetch topics; leave topics empty.' });
  }
  if (input.kind === 'WORKER' && groups.length > 0) {
    errors.push({
      path: 'groups',
      message: 'A worker credential never decides approvals; give groups to humans.',
    });
  }
  for (const g of [...groups, ...topics]) {
    if (!/^[A-Za-z0-9*][A-Za-z0-9:._*-]{0,99}$/.test(g))
      errors.push({ path: 'groups', message: `"${g}" is not a valid name.` });
  }
  let projectId: string | null = input.projectId ?? actor.projectId;
  if (input.projectId === '*') {
    if (input.kind !== 'WORKER')
      errors.push({ path: 'projectId', message: 'Only workers may be global ("*").' });
    projectId = null;
  }
  if (errors.length)
    throw new EngineError('VALIDATION_FAILED', 'The principal is invalid; see errors.', { errors });
  // The bootstrap admin (ABADA_ADMIN_TOKEN) sets up projects; other admins stay inside their own.
  if (actor.principalId !== BOOTSTRAP_ADMIN_ID && projectId !== actor.projectId) {
    throw new EngineError('FORBIDDEN', 'An admin can create principals only in its own project.');
  }
  if (projectId !== null) {
    await ctx.db.insert(projects).values({ id: projectId, name: projectId }).onConflictDoNothing();
  }
  const token = newToken();
  const [row] = await ctx.db
    .insert(principals)
    .values({
      kind: input.kind,
      name: input.name,
      groups,
      topics,
      projectId,
      tokenHash: sha256Hex(token),
      createdBy: actor.principalId,
    })
    .returning();
  return {
    principal: {
      id: row.id,
      kind: row.kind,
      name: row.name,
      projectId: row.projectId,
      groups: row.groups,
      topics: row.topics,
    },
    token,
  };
}
