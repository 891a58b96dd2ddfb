/**
 * Who calls, for GraphQL over HTTP and graphql-ws. A bearer token wins (Abada's own, or with
 * ABADA_OIDC_AUDIENCE the provider's JWT access tokens: a person's, or a worker's client credentials); else
 * the session cookie. A request that changes state with the cookie must carry the session's CSRF token
 * (x-abada-csrf); a graphql-ws upgrade with the cookie must come from Abada's own origin. A session whose
 * groups are due for the provider's confirmation is refreshed first (one refresh per session at a time).
 */
import type { Actor, EngineContext } from '../engine/common/index.js';
import {
  bearerToken,
  clientActor,
  constantTimeEqual,
  identify,
  providerActor,
  refreshSession,
  type SessionView,
  sessionBySecret,
  sessionsDueForRefresh,
} from '../engine/principals/index.js';
import { AccessTokenVerifier, looksLikeJwt } from './access-tokens.js';
import { cookieNames, readCookie } from './cookies.js';
import type { OidcClient } from './oidc.js';

export interface Identity {
  actor: Actor | null;
  /** why the caller was refused, when it can act on it */
  refusal: string | null;
  /** the session when the cookie authenticated the caller */
  session: SessionView | null;
}

export interface CallerHeaders {
  authorization?: string | null;
  cookie?: string | null;
  csrf?: string | null;
  origin?: string | null;
}

const NOBODY: Identity = { actor: null, refusal: null, session: null };
const refused = (refusal: string | null): Identity => ({ ...NOBODY, refusal });

export class Identifier {
  private readonly verifier: AccessTokenVerifier | null;
  private readonly refreshing = new Map<string, Promise<Actor | null>>();

  constructor(
    private readonly engine: EngineContext,
    private readonly oidc: OidcClient | null,
    private readonly origin: () => string,
  ) {
    const s = engine.config.oidc;
    this.verifier = oidc && s?.audience ? new AccessTokenVerifier(oidc, s.audience, s.algorithms) : null;
  }

  /** An HTTP request: `changesState` (any method but GET/HEAD) requires the CSRF token with the cookie. */
  async http(h: CallerHeaders, changesState: boolean): Promise<Identity> {
    if (h.authorization) return this.bearer(h.authorization);
    const found = await this.cookie(h.cookie ?? null);
    if (!found.session || !changesState) return found;
    if (h.csrf && constantTimeEqual(h.csrf, found.session.csrfToken)) return found;
    return refused(
      'A request that changes state with the session cookie needs the x-abada-csrf header ' +
        '(GET /auth/session returns it); reload the dashboard.',
    );
  }

  /** A graphql-ws connection: the bearer token of connectionParams, else the cookie from Abada's origin. */
  async socket(h: CallerHeaders): Promise<Identity> {
    if (h.authorization) return this.bearer(h.authorization);
    if (!h.cookie) return NOBODY;
    if (h.origin !== this.origin())
      return refused('A session cookie is accepted only from the dashboard’s own origin.');
    return this.cookie(h.cookie);
  }

  async bearer(value: string): Promise<Identity> {
    const token = bearerToken(value);
    if (!token) return NOBODY;
    if (this.verifier && looksLikeJwt(token)) {
      const checked = await this.verifier.verify(token);
      if ('refusal' in checked) return refused(checked.refusal);
      // only a client-credentials token (no person involved: sub = client_id) may act as a worker
      if (checked.clientId !== null && checked.clientId === checked.subject)
        return { ...(await clientActor(this.engine, checked.clientId)), session: null };
      return { ...(await providerActor(this.engine, checked.issuer, checked.subject)), session: null };
    }
    return { ...(await identify(this.engine, token)), session: null };
  }

  async cookie(header: string | null): Promise<Identity> {
    const secret = readCookie(header ?? undefined, cookieNames(this.origin()).session);
    if (!secret || !this.oidc) return NOBODY;
    const found = await sessionBySecret(this.engine, secret);
    if (!found.session) return refused(found.refusal);
    if (!found.session.refreshDue) return found;
    const actor = await this.refresh(found.session);
    if (actor) return { actor, refusal: null, session: found.session };
    return refused('The OpenID Provider no longer confirms your sign-in; your session ended. Sign in again.');
  }

  /** Refreshes the sessions due (the background sweep); one at a time, so the provider sees no burst. */
  async refreshDue(): Promise<void> {
    if (!this.oidc) return;
    const issuer = await this.oidc.issuer();
    for (const session of await sessionsDueForRefresh(this.engine, issuer)) await this.refresh(session);
  }

  /** Asks the provider for the person's groups again; null ends the session. */
  private refresh(session: SessionView): Promise<Actor | null> {
    let running = this.refreshing.get(session.id);
    if (!running) {
      running = this.refreshOnce(session).finally(() => this.refreshing.delete(session.id));
      this.refreshing.set(session.id, running);
    }
    return running;
  }

  private async refreshOnce(session: SessionView): Promise<Actor | null> {
    const next = this.oidc ? await this.oidc.refresh(session.providerTokens, session.subject) : null;
    return refreshSession(
      this.engine,
      session,
      next?.identity ?? null,
      next?.tokens ?? session.providerTokens,
    );
  }
}
