/**
 * The provider's JWT access tokens as bearer tokens (SPEC §12, ABADA_OIDC_AUDIENCE), against a real
 * oidc-provider: a token it issues for Abada's audience (resource indicator) authenticates the person
 * who signed in with the same subject; a token signed with another key, expired, for another audience,
 * or with an algorithm outside the allow-list is refused; Abada's own tokens keep working.
 */
import { createHash, randomBytes } from 'node:crypto';
import { generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, loginAtProvider } from '../../server/demo/oidc-signin.js';
import { AUDIENCE, type OidcStack, PASSWORD, startOidcStack } from '../helpers/oidc.js';

let s: OidcStack;
beforeAll(async () => {
  s = await startOidcStack();
});
afterAll(() => s?.close());

const ME = '{ me { id name kind } }';

/** An access token from the provider's own token endpoint: code flow with PKCE for the API's resource. */
async function providerAccessToken(user: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = `${s.engine.url}/auth/callback`;
  const auth = new URL(`${s.provider.issuer}/auth`);
  auth.search = new URLSearchParams({
    client_id: 'abada',
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid api',
    resource: AUDIENCE,
    state: 'x',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const back = new URL(await loginAtProvider(new CookieJar(), auth.href, user, PASSWORD));
  const res = await fetch(`${s.provider.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: 'abada',
      client_secret: s.clientSecret,
      resource: AUDIENCE,
    }).toString(),
  });
  const body = (await res.json()) as { access_token: string };
  expect(body.access_token.split('.')).toHaveLength(3);
  return body.access_token;
}

async function signed(claims: Record<string, unknown>, key?: CryptoKey | Uint8Array, alg = 'RS256') {
  const k = key ?? (await importJWK(s.provider.signingKey, 'RS256'));
  return new SignJWT(claims)
    .setProtectedHeader({ alg, kid: s.provider.signingKey.kid })
    .setIssuer(s.provider.issuer)
    .setIssuedAt()
    .sign(k);
}

describe('access tokens of the OpenID Provider', () => {
  it('accepts a JWT the provider issued for the audience, as the person with that subject', async () => {
    const id = (await s.gql(await s.signIn('fiona'), ME)).data.me.id;
    const token = await providerAccessToken('fiona');
    const r = await s.engine.client.as(token).execute<{ me: { id: string } }>(ME);
    expect(r.errors).toBeUndefined();
    expect(r.data?.me.id).toBe(id);
  });

  it('refuses a forged, expired, foreign-audience or wrong-algorithm token, and a subject that never signed in', async () => {
    await s.signIn('fiona');
    const base = { sub: 'fiona', aud: AUDIENCE };
    const exp = Math.floor(Date.now() / 1000) + 300;
    const { privateKey: otherKey } = await generateKeyPair('RS256');
    const cases: [string, string, RegExp][] = [
      ['forged', await signed({ ...base, exp }, otherKey), /refused/],
      ['expired', await signed({ ...base, exp: Math.floor(Date.now() / 1000) - 120 }), /expired/],
      ['audience', await signed({ sub: 'fiona', aud: 'https://other.example', exp }), /refused/],
      [
        'alg',
        await signed({ ...base, exp }, new TextEncoder().encode(s.clientSecret.padEnd(32, 'x')), 'HS256'),
        /refused/,
      ],
      [
        'unknown subject',
        await signed({ sub: 'nobody', aud: AUDIENCE, exp }),
        /sign in to the dashboard once/,
      ],
    ];
    for (const [what, token, message] of cases) {
      const r = await s.engine.client.as(token).execute(ME);
      expect(r.errors?.[0].extensions?.code, what).toBe('UNAUTHENTICATED');
      expect(r.errors?.[0].message, what).toMatch(message);
    }
    // the provider's key and claims, not expired: accepted (the checks above are what refused)
    const fine = await s.engine.client
      .as(await signed({ ...base, exp }))
      .execute<{ me: { name: string } }>(ME);
    expect(fine.data?.me.name).toBe('fiona');
  });

  it('keeps Abada’s own bearer tokens for workers and scripts', async () => {
    const token = await s.engine.principal('WORKER', 'w', { topics: ['abada:agent'] });
    expect((await s.engine.ok(token, ME)).me.kind).toBe('WORKER');
  });
});
