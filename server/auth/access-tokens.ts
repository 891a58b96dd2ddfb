/**
 * The provider's JWT access tokens as bearer tokens (SPEC §12, with ABADA_OIDC_AUDIENCE): verified with jose
 * against the provider's JWKS (cached, refetched for an unknown key id) for the issuer, the audience, the
 * expiry and an algorithm allow-list. A client-credentials token (`sub` equal to `client_id`) acts as the
 * WORKER naming that client; any other as the person (issuer + subject), who must have signed in once.
 */
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import type { OidcClient } from './oidc.js';

/** `clientId`: the token's `client_id` claim (RFC 9068), null without one. */
export type AccessTokenCheck =
  | { subject: string; issuer: string; clientId: string | null }
  | { refusal: string };

/** Three base64url parts: worth checking as a JWT (Abada's own tokens start with abada_). */
export const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);

export class AccessTokenVerifier {
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;

  /**
   * `jwksCooldownMs`: the least time between two JWKS fetches (jose's default, 30 s), so a rotated key is
   * picked up and a flood of made-up key ids cannot hammer the provider.
   */
  constructor(
    private readonly oidc: OidcClient,
    private readonly audience: string,
    private readonly algorithms: string[],
    private readonly jwksCooldownMs = 30_000,
  ) {}

  async verify(token: string): Promise<AccessTokenCheck> {
    const issuer = await this.oidc.issuer();
    if (!this.jwks) {
      const uri = await this.oidc.jwksUri();
      if (!uri)
        return { refusal: 'The OpenID Provider publishes no JWKS; its access tokens cannot be checked.' };
      this.jwks = createRemoteJWKSet(new URL(uri), { cooldownDuration: this.jwksCooldownMs });
    }
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        issuer,
        audience: this.audience,
        algorithms: this.algorithms,
        requiredClaims: ['exp', 'sub'],
      });
      const clientId = typeof payload.client_id === 'string' ? payload.client_id : null;
      return { subject: String(payload.sub), issuer, clientId };
    } catch (e) {
      // jose's refusals are JOSEErrors with a code; the JWKS out of reach (fetch's TypeError) or a bug
      // is not the token's fault, and goes to the request's error handling like a failed discovery
      if (!(e instanceof errors.JOSEError)) throw e;
      return {
        refusal:
          e.code === 'ERR_JWT_EXPIRED'
            ? 'The access token has expired; get a new one from the OpenID Provider.'
            : `The access token was refused (${e.code}): it must be a JWT of ${issuer} for the audience ` +
              `${this.audience}, signed with ${this.algorithms.join('/')}, and not expired.`,
      };
    }
  }
}
