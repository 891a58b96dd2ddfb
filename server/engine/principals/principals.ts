/**
 * Principals and tokens. A token is 32 random bytes shown once; only its SHA-256 is stored, and lookups
 * go by that hash, so no comparison ever touches a stored secret. The bootstrap ABADA_ADMIN_TOKEN is
 * compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { principals } from '../../db/schema.js';
import { sha256Hex } from '../../shared/canonical.js';
import { type EngineContext, systemAdmin } from '../common/index.js';
import { identityCache } from './cache.js';
import { BOOTSTRAP_ADMIN_ID, actorOf, refused } from './views.js';

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
 * Resolves a bearer token: the actor, or null with a `refusal` the caller can act on (a disabled principal's
 * token). Cached per process (cache.ts), dropped on every engine when a principal changes.
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
