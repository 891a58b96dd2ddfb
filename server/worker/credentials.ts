/**
 * The worker's sign-in with OpenID client credentials (SPEC §15.1, the engine's audience as `resource`):
 * the token is renewed before it expires, lazily (the first request past the renewal time fetches it,
 * concurrent requests share that fetch). With the provider away the current token serves until it
 * expires; then requests fail as unreachable and the loop backs off as for the engine.
 */
import * as client from 'openid-client';
import { UnreachableError } from '../client/index.js';
import { isProviderRefusal, isProviderUnreachable } from '../shared/provider-errors.js';

export interface WorkerOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** sent as `resource` (RFC 8707): the engine's ABADA_OIDC_AUDIENCE; null = not sent */
  resource: string | null;
}

/** A token's lifetime when the provider does not say (`expires_in` missing), in seconds. */
const DEFAULT_LIFETIME_S = 300;

/**
 * When to renew a token of `lifetimeS` seconds obtained at `now`: 60 s before it expires, or at 80 % of
 * a lifetime shorter than five minutes (a 60 s margin would renew a short token at once), and at least
 * a second early: providers count `iat`/`exp` in whole seconds, so a token may end up to 1 s sooner.
 */
export function renewalTime(now: number, lifetimeS: number): number {
  return now + Math.min(Math.max(lifetimeS * 0.8, lifetimeS - 60), lifetimeS - 1) * 1000;
}

export class ClientCredentials {
  private discovered: Promise<client.Configuration> | null = null;
  private held: { token: string; renewAt: number; expiresAt: number } | null = null;
  private fetching: Promise<string> | null = null;

  constructor(
    private readonly settings: WorkerOidc,
    /** told of every new token with its lifetime in seconds (the loop logs it) */
    private readonly onRenew: (expiresInS: number) => void = () => {},
  ) {}

  /** The current token, renewed first when due. */
  token = async (): Promise<string> => {
    if (this.held && Date.now() < this.held.renewAt) return this.held.token;
    this.fetching ??= this.renew().finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  };

  private async renew(): Promise<string> {
    try {
      const config = await this.configuration();
      const params: Record<string, string> = {};
      if (this.settings.resource) params.resource = this.settings.resource;
      // the lifetime counts from the request: the token was issued before its answer arrived
      const obtained = Date.now();
      const answer = await client.clientCredentialsGrant(config, params);
      const lifetime = answer.expires_in ?? DEFAULT_LIFETIME_S;
      this.held = {
        token: answer.access_token,
        renewAt: renewalTime(obtained, lifetime),
        expiresAt: obtained + lifetime * 1000,
      };
      this.onRenew(lifetime);
      return answer.access_token;
    } catch (e) {
      if (!isProviderRefusal(e) && !isProviderUnreachable(e)) throw e;
      // a token still good serves while the provider is away or refuses; after that the engine
      // call fails as unreachable (the loop backs off and tries again)
      if (this.held && Date.now() < this.held.expiresAt - 1000) return this.held.token;
      throw new UnreachableError(
        `No access token from the OpenID Provider ${this.settings.issuer} for the client ` +
          `${this.settings.clientId}: ${(e as Error).message}. Check ABADA_WORKER_OIDC_CLIENT_ID/SECRET ` +
          'and that the provider allows it the client_credentials grant.',
        { cause: e },
      );
    }
  }

  private configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      const insecure = new URL(this.settings.issuer).protocol === 'http:';
      this.discovered = client
        .discovery(
          new URL(this.settings.issuer),
          this.settings.clientId,
          this.settings.clientSecret,
          undefined,
          { execute: insecure ? [client.allowInsecureRequests] : [], timeout: 10 },
        )
        .catch((e) => {
          // the next call discovers again
          this.discovered = null;
          throw e;
        });
    }
    return this.discovered;
  }
}
