/**
 * A real OpenID Provider (oidc-provider, the demo's) and a real engine configured to use it, for the
 * sign-in tests: no mocked provider. `signIn` goes through /auth/login, the provider's login form and
 * /auth/callback like a browser; `gql` calls /graphql with the session cookie (and the CSRF token).
 */
import { randomBytes } from 'node:crypto';
import { print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { type CookieJar, request, signInThroughProvider } from '../../server/demo/oidc-signin.js';
import {
  type DemoProvider,
  demoAccounts,
  type ProviderOptions,
  startDemoProvider,
} from '../../server/demo/oidc-provider.js';
import type { ResultOf, TadaDocumentNode } from '../../server/client/index.js';
import { startTestEngine, type GqlResult, type TestEngine } from './engine.js';
import type { Untyped } from './untyped.js';

// biome-ignore lint/suspicious/noExplicitAny: the variables of any typed document, as the client's own
type AnyDocument = TadaDocumentNode<any, any>;

export const PASSWORD = 'correct horse';
export const AUDIENCE = 'https://api.abada.test';

export interface OidcStack {
  provider: DemoProvider;
  engine: TestEngine;
  clientSecret: string;
  signIn(user: string): Promise<CookieJar>;
  session(jar: CookieJar): Promise<{ signedIn: boolean; csrfToken: string | null; refusal: string | null }>;
  gql<D extends AnyDocument>(
    jar: CookieJar,
    doc: D,
    variables?: object,
    csrf?: string | null,
  ): Promise<GqlResult<ResultOf<D>>>;
  gql<T = Untyped>(
    jar: CookieJar,
    query: string,
    variables?: object,
    csrf?: string | null,
  ): Promise<GqlResult<T>>;
  /** graphql-ws with the session cookie, opened from `origin` (default: the dashboard's) as a browser does */
  wsClient(jar: CookieJar, origin?: string, opts?: { lazy?: boolean }): Client;
  close(): Promise<void>;
}

export async function startOidcStack(
  opts: {
    env?: Record<string, string>;
    refreshTokens?: boolean;
    databaseUrl?: string;
    /** more of the provider's options: workers' client-credentials clients, the access tokens' TTL */
    provider?: Omit<ProviderOptions, 'apiAudience' | 'refreshTokens'>;
  } = {},
): Promise<OidcStack> {
  const provider = await startDemoProvider({ accounts: demoAccounts(PASSWORD) });
  const clientSecret = randomBytes(16).toString('hex');
  const engine = await startTestEngine({
    databaseUrl: opts.databaseUrl,
    env: {
      ABADA_OIDC_ISSUER: provider.issuer,
      ABADA_OIDC_CLIENT_ID: 'abada',
      ABADA_OIDC_CLIENT_SECRET: clientSecret,
      ABADA_OIDC_ADMIN_GROUP: 'abada-admins',
      ABADA_OIDC_AUDIENCE: AUDIENCE,
      ...opts.env,
    },
  });
  provider.configure(
    {
      clientId: 'abada',
      clientSecret,
      redirectUris: [`${engine.url}/auth/callback`],
      postLogoutRedirectUris: [`${engine.url}/`],
    },
    { apiAudience: AUDIENCE, refreshTokens: opts.refreshTokens, ...opts.provider },
  );
  const session: OidcStack['session'] = async (jar) =>
    (await request(jar, `${engine.url}/auth/session`)).json() as never;
  const gql = async (
    jar: CookieJar,
    query: string | AnyDocument,
    variables?: object,
    csrf?: string | null,
  ) => {
    const token = csrf === undefined ? (await session(jar)).csrfToken : csrf;
    const res = await request(jar, `${engine.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { 'x-abada-csrf': token } : {}) },
      body: JSON.stringify({ query: typeof query === 'string' ? query : print(query), variables }),
    });
    return (await res.json()) as GqlResult<unknown>;
  };
  return {
    provider,
    engine,
    clientSecret,
    signIn: (user) => signInThroughProvider(engine.url, user, PASSWORD),
    session,
    gql: gql as OidcStack['gql'],
    wsClient(jar, origin = engine.url, o = {}) {
      const headers = { cookie: jar.header(new URL(engine.url)), origin };
      class CookieWebSocket extends WebSocket {
        constructor(url: string, protocols?: string | string[]) {
          super(url, protocols, { headers });
        }
      }
      const url = `${engine.url.replace('http', 'ws')}/graphql`;
      return createClient({ url, webSocketImpl: CookieWebSocket, retryAttempts: 0, ...o });
    },
    async close() {
      await engine.close();
      await provider.close();
    },
  };
}

/** A client-credentials access token from the provider's token endpoint, for the engine's audience. */
export async function clientCredentialsToken(
  provider: DemoProvider,
  clientId: string,
  clientSecret: string,
  resource = AUDIENCE,
): Promise<string> {
  const res = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      resource,
    }).toString(),
  });
  const body = (await res.json()) as { access_token?: string; error?: string };
  if (!body.access_token) throw new Error(`no token for ${clientId}: ${JSON.stringify(body)}`);
  return body.access_token;
}
