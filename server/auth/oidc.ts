/**
 * The OpenID Connect relying party (SPEC §12) with openid-client: discovery from ABADA_OIDC_ISSUER (plain
 * http only on loopback, which config.ts already enforced), authorization code + PKCE with state and
 * nonce, the identity a sign-in or a refresh yields, and the provider's logout URL. Discovery runs at
 * the first use and again after a failure, so an engine starts while its provider is briefly away.
 */
import * as client from 'openid-client';
import type { OidcConfig } from '../config.js';
import { isProviderRefusal, isProviderUnreachable, ProviderAnswerError } from '../shared/provider-errors.js';
import {
  groupsFromClaim,
  principalName,
  type ProviderIdentity,
  type ProviderTokens,
} from '../engine/principals/index.js';

/** What a sign-in in progress keeps in its sealed cookie until the provider sends the browser back. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  /** ms since the epoch; a pending sign-in is good for 10 minutes */
  startedAt: number;
}

export const PENDING_TTL_MS = 10 * 60_000;

export class OidcClient {
  private discovered: Promise<client.Configuration> | null = null;

  constructor(readonly settings: OidcConfig) {}

  /** The provider's configuration, discovered once (and again after a failed attempt). */
  configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      const insecure = new URL(this.settings.issuer).protocol === 'http:';
      this.discovered = client
        .discovery(
          new URL(this.settings.issuer),
          this.settings.clientId,
          this.settings.clientSecret,
          undefined,
          {
            // the ID token's signature is checked against the provider's JWKS too, not only its claims:
            // a token endpoint answer altered on the way (or by a proxy) is refused
            execute: [client.enableNonRepudiationChecks, ...(insecure ? [client.allowInsecureRequests] : [])],
            timeout: 10,
          },
        )
        .catch((e) => {
          this.discovered = null;
          throw e;
        });
    }
    return this.discovered;
  }

  /** Starts a sign-in: the provider's authorization URL and what the callback must find again. */
  async start(redirectUri: string, returnTo: string, extra: { login_hint?: string; prompt?: string }) {
    const config = await this.configuration();
    const verifier = client.randomPKCECodeVerifier();
    const pending: PendingSignIn = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier,
      returnTo,
      startedAt: Date.now(),
    };
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    };
    if (extra.login_hint) params.login_hint = extra.login_hint;
    if (extra.prompt) params.prompt = extra.prompt;
    return { url: client.buildAuthorizationUrl(config, params), pending };
  }

  /**
   * Finishes a sign-in from the callback URL: openid-client checks the state, exchanges the code with the
   * PKCE verifier and checks the ID token (issuer, audience, expiry, nonce). Throws on any mismatch.
   */
  async finish(callbackUrl: URL, pending: PendingSignIn) {
    const config = await this.configuration();
    const response = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const claims = response.claims();
    if (!claims) throw new ProviderAnswerError('the provider sent no ID token');
    return this.identityOf(config, claims, {
      refreshToken: response.refresh_token ?? null,
      accessToken: response.access_token ?? null,
      idToken: response.id_token ?? null,
    });
  }

  /**
   * The person's current identity for a live session: with the refresh token when there is one, else
   * userinfo with the access token; null when the provider confirms neither (the session then ends).
   */
  async refresh(tokens: ProviderTokens, subject: string) {
    const config = await this.configuration();
    try {
      if (tokens.refreshToken) {
        const response = await client.refreshTokenGrant(config, tokens.refreshToken);
        const claims = response.claims();
        if (claims && claims.sub !== subject) return null;
        return this.identityOf(config, claims ?? { sub: subject }, {
          refreshToken: response.refresh_token ?? tokens.refreshToken,
          accessToken: response.access_token,
          idToken: response.id_token ?? tokens.idToken,
        });
      }
      if (tokens.accessToken) return await this.identityOf(config, { sub: subject }, tokens);
    } catch (e) {
      // refused or unreachable: the groups cannot be confirmed, so the session ends
      if (!isProviderRefusal(e) && !isProviderUnreachable(e)) throw e;
    }
    return null;
  }

  /**
   * The identity from the ID token's claims; the groups claim (and a missing name) from userinfo when
   * the ID token does not carry it and there is an access token to ask with.
   */
  private async identityOf(
    config: client.Configuration,
    idClaims: Record<string, unknown> & { sub: string },
    tokens: ProviderTokens,
  ) {
    const subject = idClaims.sub;
    let claims: Record<string, unknown> = idClaims;
    const claimName = this.settings.groupsClaim;
    if (!(claimName in claims) && tokens.accessToken) {
      const info = await client.fetchUserInfo(config, tokens.accessToken, subject);
      claims = { ...info, ...idClaims, [claimName]: info[claimName] };
    }
    const groups = groupsFromClaim(claims[claimName]);
    const identity: ProviderIdentity = {
      issuer: config.serverMetadata().issuer,
      subject,
      name: principalName(claims, subject),
      groups,
      admin: this.settings.adminGroup !== null && groups.includes(this.settings.adminGroup),
    };
    return { identity, tokens };
  }

  /** The provider's logout URL (RP-initiated logout), or null when it offers none. */
  async endSessionUrl(idToken: string | null, postLogoutRedirectUri: string): Promise<string | null> {
    const config = await this.configuration();
    if (!config.serverMetadata().end_session_endpoint) return null;
    const params: Record<string, string> = { post_logout_redirect_uri: postLogoutRedirectUri };
    if (idToken) params.id_token_hint = idToken;
    else params.client_id = this.settings.clientId;
    return client.buildEndSessionUrl(config, params).href;
  }

  async jwksUri(): Promise<string | null> {
    return (await this.configuration()).serverMetadata().jwks_uri ?? null;
  }

  async issuer(): Promise<string> {
    return (await this.configuration()).serverMetadata().issuer;
  }
}
