/**
 * The demo's identity: its own OpenID Provider with fiona, sam and ada, Abada its ordinary confidential
 * client (people sign in exactly as in production; "Sign in as fiona" is /auth/login with a login hint,
 * which the provider's login page fills in and submits), and a client-credentials client the Agent
 * Worker signs in with as the first-party worker `demo-agent` (SPEC §15.1–2).
 */
import { randomBytes } from 'node:crypto';
import type { OidcConfig } from '../config.js';
import type { DemoUser } from '../web/index.js';
import { demoAccounts, startDemoProvider } from './oidc-provider.js';
import { stablePort } from './http-util.js';
import { request, signInThroughProvider } from './oidc-signin.js';

export const DEMO_PASSWORD = 'demo';
const CLIENT_ID = 'abada-demo';
/** the demo's Agent Worker signs in as this client (client credentials) */
const WORKER_CLIENT_ID = 'abada-demo-worker';
/** the engine's audience for the provider's JWT access tokens (an identifier, never fetched) */
const AUDIENCE = 'https://abada.demo/api';

export async function startDemoIdentity(savedPort: number | undefined) {
  const accounts = demoAccounts(DEMO_PASSWORD);
  // the port of last time when it is free (registered redirect URIs stay valid), else any
  const provider = await stablePort(savedPort, (port) => startDemoProvider({ port, accounts }));
  const clientSecret = randomBytes(24).toString('base64url');
  const workerSecret = randomBytes(24).toString('base64url');
  return {
    provider,
    /** the first-party worker the engine registers at start, signing in as the worker's client */
    firstPartyWorker: { name: 'demo-agent', clientId: WORKER_CLIENT_ID, topics: ['abada:agent'] },
    /** the in-process Agent Worker's sign-in */
    workerOidc: {
      issuer: provider.issuer,
      clientId: WORKER_CLIENT_ID,
      clientSecret: workerSecret,
      resource: AUDIENCE,
    },
    oidc: {
      issuer: provider.issuer,
      clientId: CLIENT_ID,
      clientSecret,
      scopes: 'openid profile email',
      groupsClaim: 'groups',
      adminGroup: 'abada-admins',
      refreshMinutes: 10,
      audience: AUDIENCE,
      algorithms: ['RS256'],
    } satisfies OidcConfig,
    /** registers Abada's redirect and logout URIs once the engine's URL is known */
    register(origin: string) {
      provider.configure(
        {
          clientId: CLIENT_ID,
          clientSecret,
          redirectUris: [`${origin}/auth/callback`],
          postLogoutRedirectUris: [`${origin}/`],
        },
        { apiAudience: AUDIENCE, workers: [{ clientId: WORKER_CLIENT_ID, clientSecret: workerSecret }] },
      );
    },
    /** signs the person in once through the provider; returns their principal's id */
    async principalId(engineUrl: string, name: string) {
      const jar = await signInThroughProvider(engineUrl, name, DEMO_PASSWORD);
      const res = await request(jar, `${engineUrl}/graphql?query=${encodeURIComponent('{ me { id } }')}`);
      const body = (await res.json()) as { data?: { me: { id: string } }; errors?: { message: string }[] };
      if (!body.data)
        throw new Error(`demo set-up: ${name} could not sign in (${body.errors?.[0]?.message})`);
      return body.data.me.id;
    },
  };
}

/** What /demo/users.json shows with the demo provider: the one-click sign-in, never a token. */
export function oneClick(u: DemoUser): DemoUser {
  return { ...u, token: '', signIn: `/auth/login?login_hint=${encodeURIComponent(u.name)}&prompt=login` };
}
