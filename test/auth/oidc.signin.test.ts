/**
 * SPEC §12 against a real OpenID Provider (oidc-provider) started here: a first sign-in creates the
 * principal with the provider's groups (admins from ABADA_OIDC_ADMIN_GROUP), a second matches it by
 * issuer + subject; the cookies carry their flags; a forged or expired state or nonce is refused; a
 * request that changes state with the cookie needs the CSRF token; updatePrincipal cannot change the
 * provider's groups; sign-out ends the session here and at the provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sealer } from '../../server/engine/common/index.js';
import { CookieJar, loginAtProvider, request, startSignIn } from '../../server/demo/oidc-signin.js';
import { TEST_KEY } from '../helpers/engine.js';
import { type OidcStack, PASSWORD, startOidcStack } from '../helpers/oidc.js';

let s: OidcStack;
beforeAll(async () => {
  s = await startOidcStack();
});
afterAll(() => s?.close());

const ME = '{ me { id name kind groups } }';
const sealer = new Sealer({ currentKeyId: 'k1', keys: new Map([['k1', Buffer.from(TEST_KEY, 'base64')]]) });

/** A sign-in up to the provider's answer: the jar and Abada's callback URL, not yet followed. */
async function upToCallback(user = 'sam') {
  const jar = new CookieJar();
  const authorization = await startSignIn(jar, s.engine.url, '?returnTo=/approvals');
  return { jar, callback: await loginAtProvider(jar, authorization, user, PASSWORD) };
}

describe('signing in with the OpenID Provider', () => {
  it('creates the principal at the first sign-in with the provider’s groups, and matches it after', async () => {
    const jar = await s.signIn('fiona');
    const first = await s.gql(jar, ME);
    expect(first.errors).toBeUndefined();
    expect(first.data.me).toMatchObject({
      name: 'fiona',
      kind: 'HUMAN',
      groups: ['finance', 'finance-leads'],
    });
    const again = await s.gql(await s.signIn('fiona'), ME);
    expect(again.data.me.id).toBe(first.data.me.id);
    const ada = await s.gql(await s.signIn('ada'), ME);
    expect(ada.data.me).toMatchObject({ name: 'ada', kind: 'ADMIN' });
  });

  it('sets an HttpOnly, SameSite=Lax session cookie of its own name and returns where the person was', async () => {
    const { jar, callback } = await upToCallback();
    const res = await request(jar, callback);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/approvals');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('abada_session='));
    expect(cookie).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(cookie).not.toContain('Secure'); // plain http on loopback
    expect(res.headers.getSetCookie().find((c) => c.startsWith('abada_signin='))).toContain('Max-Age=0');
  });

  it('marks the cookies Secure (and __Host-) behind https', async () => {
    const https = await startOidcStack({
      env: { ABADA_PUBLIC_URL: 'https://abada.example.com' },
      databaseUrl: s.engine.databaseUrl,
    });
    try {
      const res = await request(new CookieJar(), `${https.engine.url}/auth/login`);
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location') ?? '').searchParams.get('redirect_uri')).toBe(
        'https://abada.example.com/auth/callback',
      );
      expect(res.headers.getSetCookie()[0]).toMatch(
        /^__Host-abada_signin=.*; HttpOnly; SameSite=Lax; .*; Secure$/,
      );
    } finally {
      await https.close();
    }
  });

  it('refuses a forged state, a missing or expired sign-in, and a forged nonce', async () => {
    const forged = await upToCallback();
    const url = new URL(forged.callback);
    url.searchParams.set('state', 'forged');
    const refused = await request(forged.jar, url.href);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('Sign-in failed');

    const other = await upToCallback();
    const stranger = await request(new CookieJar(), other.callback); // another browser's code
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('Sign-in expired');

    const late = await upToCallback();
    const pending = sealer.openJson<Record<string, unknown>>(
      decodeURIComponent(late.jar.get(s.engine.url, 'abada_signin') ?? ''),
    );
    late.jar.set(
      s.engine.url,
      'abada_signin',
      encodeURIComponent(sealer.sealJson({ ...pending, startedAt: 0 })),
    );
    expect((await request(late.jar, late.callback)).status).toBe(400);

    const nonce = await upToCallback();
    const p = sealer.openJson<Record<string, unknown>>(
      decodeURIComponent(nonce.jar.get(s.engine.url, 'abada_signin') ?? ''),
    );
    nonce.jar.set(
      s.engine.url,
      'abada_signin',
      encodeURIComponent(sealer.sealJson({ ...p, nonce: 'forged' })),
    );
    const badNonce = await request(nonce.jar, nonce.callback);
    expect(badNonce.status).toBe(400);
    expect(await badNonce.text()).toContain('Sign-in failed');
    expect(badNonce.headers.getSetCookie().some((c) => c.startsWith('abada_session='))).toBe(false);
  });

  it('refuses a POST carrying the cookie without the CSRF token (a cross-site form), accepts it with the token', async () => {
    const jar = await s.signIn('sam');
    const crossSite = await request(jar, `${s.engine.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ query: ME }),
    });
    const body = (await crossSite.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(body.errors[0].message).toContain('x-abada-csrf');
    expect((await s.gql(jar, ME, {}, 'not-the-token')).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect((await s.gql(jar, ME)).data.me.name).toBe('sam');
    // a GET (queries only) reads without the token
    const get = await request(jar, `${s.engine.url}/graphql?query=${encodeURIComponent(ME)}`);
    expect(((await get.json()) as { data: { me: { name: string } } }).data.me.name).toBe('sam');
  });

  it('refuses to change the groups of a provider-managed principal', async () => {
    const id = (await s.gql(await s.signIn('fiona'), ME)).data.me.id;
    const r = await s.engine.gql(
      s.engine.adminToken,
      'mutation($i: UpdatePrincipalInput!) { updatePrincipal(input: $i) { id } }',
      { i: { id, groups: ['finance'] } },
    );
    expect(r.errors?.[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', reason: 'PROVIDER_MANAGED' });
    expect(r.errors?.[0].message).toContain('change them there');
  });

  it('signs out here and at the provider', async () => {
    const jar = await s.signIn('sam');
    const { csrfToken } = await s.session(jar);
    const out = await request(jar, `${s.engine.url}/auth/logout`, {
      method: 'POST',
      headers: { 'x-abada-csrf': csrfToken ?? '', accept: 'application/json' },
    });
    const { redirect } = (await out.json()) as { redirect: string };
    const end = new URL(redirect);
    expect(`${end.origin}${end.pathname}`).toBe(`${s.provider.issuer}/session/end`);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${s.engine.url}/`);
    expect(end.searchParams.get('id_token_hint')).toBeTruthy();
    expect(await s.session(jar)).toMatchObject({ signedIn: false });
    // the provider's page submits its form itself; post it as the browser would
    const html = await (await request(jar, redirect)).text();
    const action = /action="([^"]+)"/.exec(html)?.[1] ?? '';
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const done = await request(jar, new URL(action, redirect).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
    });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`${s.engine.url}/`);
  });
});
