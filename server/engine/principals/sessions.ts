/**
 * Server-side dashboard sessions (SPEC §12): the cookie holds a random secret, the row its SHA-256, the
 * CSRF token, the lifetimes and the provider's tokens (sealed). Every request reads the session joined
 * with its principal, so a disabled principal or ended session is refused at once, with no cache to drop.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import { principals, type SessionRow, sessions } from '../../db/schema.js';
import { EngineError } from '../../errors.js';
import { sha256Hex } from '../../shared/canonical.js';
import type { Actor, EngineContext, Executor } from '../common/index.js';
import { type ProviderIdentity, refreshProviderPrincipal, upsertProviderPrincipal } from './external.js';
import { actorOf } from './views.js';
import { transaction } from '../../db/pg.js';

/** What the provider gave at sign-in or refresh; kept sealed, used to refresh and to sign out there. */
export interface ProviderTokens {
  refreshToken: string | null;
  accessToken: string | null;
  idToken: string | null;
}

type SessionEndReason = 'SIGNED_OUT' | 'IDLE' | 'EXPIRED' | 'DISABLED' | 'REFRESH_FAILED';

export type SessionView = ReturnType<typeof sessionView>;

/** Why a cookie no longer works, by the session's end reason. */
const ENDED: Record<string, string> = {
  SIGNED_OUT: 'Your session ended; sign in again.',
  IDLE: 'Your session ended after a period without activity; sign in again.',
  EXPIRED: 'Your session reached its maximum lifetime; sign in again.',
  DISABLED: 'Your principal was disabled; its sessions ended. Ask an admin.',
  REFRESH_FAILED: 'The OpenID Provider no longer confirms your sign-in; your session ended. Sign in again.',
};

/** Writing last_seen_at at most once a minute keeps the idle clock without a write per request. */
const TOUCH_EVERY_MS = 60_000;

/** Signs a person in (principal matched or created, refused if disabled): the session and cookie secret. */
export async function openSession(ctx: EngineContext, who: ProviderIdentity, tokens: ProviderTokens) {
  const secret = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  return transaction(ctx.db, async (tx) => {
    const p = await upsertProviderPrincipal(tx, who);
    const [row] = await tx
      .insert(sessions)
      .values({
        secretHash: sha256Hex(secret),
        csrfToken,
        principalId: p.id,
        providerTokens: ctx.sealer.sealJson(tokens),
        expiresAt: new Date(Date.now() + ctx.config.sessions.maxHours * 3_600_000),
      })
      .returning({ id: sessions.id });
    return {
      secret,
      session: {
        id: row.id,
        csrfToken,
        principalId: p.id,
        subject: who.subject,
        refreshDue: false,
        providerTokens: tokens,
      },
      actor: actorOf(p),
    };
  });
}

/**
 * The session of a cookie's secret and its principal, or why not: unknown (refusal null: the cookie is
 * ignored), ended, past its absolute or idle lifetime, or its principal disabled (the session ends).
 */
export async function sessionBySecret(ctx: EngineContext, secret: string) {
  const [row] = await ctx.db
    .select({ s: sessions, p: principals })
    .from(sessions)
    .innerJoin(principals, eq(principals.id, sessions.principalId))
    .where(eq(sessions.secretHash, sha256Hex(secret)))
    .limit(1);
  if (!row) return { actor: null, session: null, refusal: null };
  const { s, p } = row;
  const now = Date.now();
  const idleMs = ctx.config.sessions.idleMinutes * 60_000;
  const ended = (reason: SessionEndReason, why: string) =>
    endSession(ctx.db, s.id, reason).then(() => ({ actor: null, session: null, refusal: why }) as const);
  if (s.endedAt) return { actor: null, session: null, refusal: ENDED[s.endReason ?? ''] ?? ENDED.SIGNED_OUT };
  if (p.disabledAt) return ended('DISABLED', ENDED.DISABLED);
  if (s.expiresAt.getTime() <= now) return ended('EXPIRED', ENDED.EXPIRED);
  if (s.lastSeenAt.getTime() + idleMs <= now) return ended('IDLE', ENDED.IDLE);
  if (now - s.lastSeenAt.getTime() > TOUCH_EVERY_MS) {
    await ctx.db.update(sessions).set({ lastSeenAt: sql`now()` }).where(eq(sessions.id, s.id));
  }
  const refreshDue = s.refreshedAt.getTime() + refreshMinutes(ctx) * 60_000 <= now;
  return { actor: actorOf(p), session: sessionView(ctx, s, p.oidcSubject, refreshDue), refusal: null };
}

const refreshMinutes = (ctx: EngineContext) => ctx.config.oidc?.refreshMinutes ?? 10;

/** `subject`: the person's at the provider; `refreshDue`: ABADA_OIDC_REFRESH_MINUTES passed, confirm again. */
function sessionView(ctx: EngineContext, s: SessionRow, subject: string | null, refreshDue: boolean) {
  const { id, csrfToken, principalId } = s;
  const providerTokens = ctx.sealer.openJson(s.providerTokens) as ProviderTokens;
  return { id, csrfToken, principalId, subject: subject ?? '', refreshDue, providerTokens };
}

/** Ends a session (idempotent: an ended session keeps its first reason). */
export async function endSession(db: Executor, sessionId: string, reason: SessionEndReason): Promise<void> {
  await endSessionsOf(db, reason, eq(sessions.id, sessionId));
}

/** Ends the live sessions `which` selects (all of a principal's, when it is disabled). */
export async function endSessionsOf(ex: Executor, reason: SessionEndReason, which: SQL) {
  await ex
    .update(sessions)
    .set({ endedAt: sql`now()`, endReason: reason })
    .where(and(which, isNull(sessions.endedAt)));
}

/**
 * Applies a refresh's groups, rights and tokens; the refresh clock restarts. `who` null (the provider would
 * not confirm the person) or a principal disabled meanwhile ends the session.
 */
export async function refreshSession(
  ctx: EngineContext,
  session: SessionView,
  who: ProviderIdentity | null,
  tokens: ProviderTokens,
): Promise<Actor | null> {
  if (!who) {
    await endSession(ctx.db, session.id, 'REFRESH_FAILED');
    return null;
  }
  return transaction(ctx.db, async (tx) => {
    // UNAUTHENTICATED: the principal was disabled since; any other failure is the transaction's
    const p = await refreshProviderPrincipal(tx, session.principalId, who).catch((e: unknown) => {
      if (e instanceof EngineError && e.code === 'UNAUTHENTICATED') return null;
      throw e;
    });
    if (!p) {
      await endSession(tx, session.id, 'DISABLED');
      return null;
    }
    await tx
      .update(sessions)
      .set({ refreshedAt: sql`now()`, providerTokens: ctx.sealer.sealJson(tokens) })
      .where(eq(sessions.id, session.id));
    return actorOf(p);
  });
}

/**
 * Live sessions due for the provider's confirmation, for the background refresh: an idle dashboard's
 * graphql-ws subscriptions lose a group removed at the provider within the interval, not at the next request.
 */
export async function sessionsDueForRefresh(ctx: EngineContext, issuer: string, limit = 50) {
  const rows = await ctx.db
    .select({ s: sessions, subject: principals.oidcSubject })
    .from(sessions)
    .innerJoin(principals, eq(principals.id, sessions.principalId))
    .where(
      and(
        isNull(sessions.endedAt),
        isNull(principals.disabledAt),
        eq(principals.oidcIssuer, issuer),
        sql`${sessions.refreshedAt} <= now() - make_interval(secs => ${refreshMinutes(ctx) * 60})`,
        sql`${sessions.lastSeenAt} > now() - make_interval(secs => ${ctx.config.sessions.idleMinutes * 60})`,
        sql`${sessions.expiresAt} > now()`,
      ),
    )
    .orderBy(sessions.refreshedAt)
    .limit(limit);
  return rows.map(({ s, subject }) => sessionView(ctx, s, subject, true));
}
