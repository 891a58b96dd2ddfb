/**
 * A real OpenID Provider (the certified `oidc-provider` package) for the demo and the tests, never the
 * engine: people with passwords and groups (in memory: tests change them to see Abada follow), a login
 * page, one confidential client for Abada (authorization code + PKCE, refresh tokens), RP-initiated
 * logout, and optionally JWT access tokens for an API audience, to people and to workers'
 * client-credentials clients. It listens first (the issuer is known before the engine starts) and
 * answers 503 until `configure`, once Abada's redirect URI is known, builds the provider.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { closeServer, listen } from './http-util.js';

export interface DemoAccount {
  password: string;
  name: string;
  email: string;
  groups: string[];
}

export interface ProviderClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

export interface ProviderOptions {
  /** issue JWT access tokens for this resource (Abada's ABADA_OIDC_AUDIENCE) */
  apiAudience?: string;
  refreshTokens?: boolean;
  /** workers' client-credentials clients (SPEC §15.1): JWT access tokens for `apiAudience` */
  workers?: { clientId: string; clientSecret: string }[];
  /** lifetime of the API's access tokens in seconds (default 600) */
  accessTokenTtl?: number;
}

export type DemoProvider = Awaited<ReturnType<typeof startDemoProvider>>;

/** The three demo people; their groups match the demo's definitions (finance-leads approve refunds). */
export function demoAccounts(password: string): Map<string, DemoAccount> {
  return new Map([
    ['fiona', { password, name: 'Fiona', email: 'fiona@example.com', groups: ['finance', 'finance-leads'] }],
    ['sam', { password, name: 'Sam', email: 'sam@example.com', groups: ['support'] }],
    ['ada', { password, name: 'Ada', email: 'ada@example.com', groups: ['abada-admins'] }],
  ]);
}

export async function startDemoProvider(opts: {
  port?: number;
  accounts: Map<string, DemoAccount>;
  /** the issuer when browsers and clients reach it through something else (tests: a tampering proxy) */
  issuer?: string;
}) {
  const keys: JWK[] = [await newSigningKey()];
  let configured: { client: ProviderClient; o: ProviderOptions } | null = null;
  let jwksFetches = 0;
  let provider: InstanceType<typeof Provider> | null = null;
  let callback: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | null = null;
  const build = () => {
    if (!configured) return;
    provider = buildProvider(issuer, configured.client, opts.accounts, keys, configured.o);
    callback = provider.callback();
  };
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/jwks')) jwksFetches++;
    if (!provider || !callback) {
      res.writeHead(503).end('the demo OpenID Provider is starting');
      return;
    }
    interactions(provider, opts.accounts, req, res)
      .then((handled) => {
        if (!handled) callback?.(req, res);
      })
      .catch((e) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String((e as Error).message));
      });
  });
  const port = await listen(server, opts.port ?? 0, '127.0.0.1');
  const issuer = opts.issuer ?? `http://127.0.0.1:${port}`;
  return {
    issuer,
    port,
    /** the people; change `groups` to change what the provider says from now on */
    accounts: opts.accounts,
    /** the provider's current signing key (private): tests sign tokens with it to check expiry handling */
    get signingKey() {
      return keys[0];
    },
    /** how often its JWKS was fetched (tests: the engine caches it) */
    get jwksFetches() {
      return jwksFetches;
    },
    configure(client: ProviderClient, o: ProviderOptions = {}) {
      configured = { client, o };
      build();
    },
    /** signs with a new key from now on; the JWKS keeps the old one too, as a provider's rotation does */
    async rotateKey() {
      keys.unshift(await newSigningKey());
      build();
    },
    close: () => closeServer(server),
  };
}

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomBytes(6).toString('hex'), alg: 'RS256', use: 'sig' };
}

/** `keys[0]` signs; the others stay published so tokens they signed still verify. */
function buildProvider(
  issuer: string,
  client: ProviderClient,
  accounts: Map<string, DemoAccount>,
  keys: JWK[],
  o: ProviderOptions,
) {
  return new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: client.redirectUris,
        post_logout_redirect_uris: client.postLogoutRedirectUris,
        grant_types:
          o.refreshTokens === false ? ['authorization_code'] : ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      ...(o.workers ?? []).map((w) => ({
        client_id: w.clientId,
        client_secret: w.clientSecret,
        redirect_uris: [],
        response_types: [],
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'client_secret_post',
      })),
    ],
    jwks: { keys: [...keys] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true, methods: ['S256'] },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username', 'groups'], email: ['email'] },
    // the ID token carries the groups (as Keycloak and Okta can be set up to do); userinfo has them too
    conformIdTokenClaims: false,
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true, logoutSource },
      clientCredentials: { enabled: (o.workers ?? []).length > 0 },
      ...(o.apiAudience
        ? { resourceIndicators: resourceIndicators(o.apiAudience, o.accessTokenTtl ?? 600) }
        : {}),
    },
    // a refresh token for every sign-in of a client allowed the grant (no offline_access dance)
    issueRefreshToken: async (_ctx: unknown, c: { grantTypeAllowed(t: string): boolean }) =>
      c.grantTypeAllowed('refresh_token'),
    // first-party client: consent is implied, so the grant is established just in time
    loadExistingGrant,
    findAccount: async (_ctx: unknown, id: string) => {
      const a = accounts.get(id);
      if (!a) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          preferred_username: id,
          name: a.name,
          email: a.email,
          groups: [...a.groups],
        }),
      };
    },
    ttl: {
      AccessToken: 600,
      ClientCredentials: o.accessTokenTtl ?? 600,
      IdToken: 600,
      RefreshToken: 86_400,
      Session: 86_400,
      Grant: 86_400,
      Interaction: 600,
    },
    // its own in-memory store (the demo's provider forgets everything on restart, as it may)
    adapter: MemoryAdapter,
  });
}

type Stored = { payload: Record<string, unknown>; expiresAt: number };
const stores = new Map<string, Map<string, Stored>>();

/** oidc-provider's storage interface over Maps, one per model (what its default adapter does, minus the warning). */
class MemoryAdapter {
  private readonly rows: Map<string, Stored>;
  constructor(model: string) {
    this.rows = stores.get(model) ?? new Map();
    stores.set(model, this.rows);
  }
  async upsert(id: string, payload: Record<string, unknown>, expiresIn: number) {
    this.rows.set(id, { payload, expiresAt: Date.now() + (expiresIn || 86_400) * 1000 });
  }
  async find(id: string) {
    const row = this.rows.get(id);
    if (!row || row.expiresAt < Date.now()) return undefined;
    return row.payload;
  }
  async findByUid(uid: string) {
    return [...this.rows.values()].find((r) => r.payload.uid === uid)?.payload;
  }
  async consume(id: string) {
    const row = this.rows.get(id);
    if (row) row.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    this.rows.delete(id);
  }
  async revokeByGrantId(grantId: string) {
    for (const [id, r] of this.rows) if (r.payload.grantId === grantId) this.rows.delete(id);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: oidc-provider's koa context
async function loadExistingGrant(ctx: any) {
  const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
  const found = grantId && (await ctx.oidc.provider.Grant.find(grantId));
  if (found) return found;
  const grant = new ctx.oidc.provider.Grant({
    clientId: ctx.oidc.client.clientId,
    accountId: ctx.oidc.session.accountId,
  });
  grant.addOIDCScope('openid profile email offline_access');
  const resource = ctx.oidc.params?.resource;
  if (typeof resource === 'string') grant.addResourceScope(resource, 'api');
  await grant.save();
  return grant;
}

function resourceIndicators(audience: string, ttl: number) {
  return {
    enabled: true,
    defaultResource: () => undefined,
    useGrantedResource: () => true,
    getResourceServerInfo: (_ctx: unknown, resource: string) => {
      if (resource !== audience) throw new Error(`unknown resource ${resource}`);
      return {
        scope: 'api',
        audience,
        accessTokenFormat: 'jwt',
        accessTokenTTL: ttl,
        jwt: { sign: { alg: 'RS256' } },
      };
    },
  };
}

/** The provider's sign-out page submits itself (the demo asks no question: leaving Abada means leaving). */
// biome-ignore lint/suspicious/noExplicitAny: oidc-provider's koa context
async function logoutSource(ctx: any, form: string) {
  const signOut = form.replace('</form>', '<input type="hidden" name="logout" value="yes"></form>');
  ctx.body = `<!doctype html><meta charset="utf-8"><title>Signing out</title><p>Signing out…</p>${signOut}<script>document.getElementById('op.logoutForm').submit()</script>`;
}

/** The login page of an interaction (GET /interaction/:uid) and its form (POST /interaction/:uid/login). */
async function interactions(
  provider: InstanceType<typeof Provider>,
  accounts: Map<string, DemoAccount>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<boolean> {
  const m = /^\/interaction\/([\w-]+)(\/login)?$/.exec((req.url ?? '').split('?')[0]);
  if (!m) return false;
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name !== 'login') {
    // consent is implied for the first-party client (loadExistingGrant): finish with the grant as is
    await provider.interactionFinished(req, res, { consent: {} }, { mergeWithLastSubmission: true });
    return true;
  }
  const page = (hint: unknown, error: string | null) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(loginPage(details.uid, hint, error, accounts));
    return true;
  };
  if (!m[2] || req.method !== 'POST') return page(details.params.login_hint, null);
  const form = await readForm(req);
  const user = form.get('username') ?? '';
  if (accounts.get(user)?.password !== form.get('password'))
    return page(user, 'Unknown user or wrong password.');
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: user } },
    { mergeWithLastSubmission: false },
  );
  return true;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The login page. A `login_hint` naming a demo person ("Sign in as fiona") fills the form in and submits
 * it: one click, through the same round trip as a typed password (demo passwords are printed anyway).
 */
function loginPage(
  uid: string,
  hint: unknown,
  error: string | null,
  accounts: Map<string, { password: string }>,
): string {
  const user = typeof hint === 'string' ? hint : '';
  const oneClick = !error && accounts.has(user);
  const password = oneClick ? (accounts.get(user)?.password ?? '') : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo identity provider — sign in</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;margin:.3rem 0}input,button{padding:.5rem;font-size:1rem}.error{color:#b00020}</style>
</head><body>
<h1>Demo identity provider</h1>
<p>Sign in to continue to Abada. People: ${[...accounts.keys()].map(esc).join(', ')}.</p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form id="login" method="post" action="/interaction/${esc(uid)}/login">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" value="${esc(user)}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" value="${esc(password)}" required>
<button type="submit">Sign in</button>
</form>
${oneClick ? `<script>document.getElementById('login').submit()</script>` : ''}
</body></html>`;
}

/** A posted form (its first 8 KiB). */
async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 8192) break;
  }
  return new URLSearchParams(body);
}
