/**
 * The provider's JWKS as the engine keeps it (SPEC §15.1): fetched once and cached, refetched when a
 * token names a key not seen yet, so a rotated signing key is picked up without a restart, and tokens
 * signed with the previous key keep verifying while the provider still publishes it. The cool-down
 * between two fetches is 30 s in the engine; here it is 0 so the test takes no wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenVerifier, OidcClient } from '../../server/auth/testing.js';
import { type DemoProvider, demoAccounts, startDemoProvider } from '../../server/demo/oidc-provider.js';
import { AUDIENCE, clientCredentialsToken, PASSWORD } from '../helpers/oidc.js';

let provider: DemoProvider;

beforeAll(async () => {
  provider = await startDemoProvider({ accounts: demoAccounts(PASSWORD) });
  provider.configure(
    {
      clientId: 'abada',
      clientSecret: 's',
      redirectUris: ['http://127.0.0.1/cb'],
      postLogoutRedirectUris: [],
    },
    { apiAudience: AUDIENCE, workers: [{ clientId: 'w', clientSecret: 'w-secret' }] },
  );
});
afterAll(() => provider?.close());

describe('the JWKS cache', () => {
  it('fetches the keys once, and again only for a rotated key', async () => {
    const oidc = new OidcClient({
      issuer: provider.issuer,
      clientId: 'abada',
      clientSecret: 's',
      scopes: 'openid',
      groupsClaim: 'groups',
      adminGroup: null,
      refreshMinutes: 10,
      audience: AUDIENCE,
      algorithms: ['RS256'],
    });
    const verifier = new AccessTokenVerifier(oidc, AUDIENCE, ['RS256'], 0);
    const before = await clientCredentialsToken(provider, 'w', 'w-secret');
    for (let i = 0; i < 3; i++)
      expect(await verifier.verify(before)).toMatchObject({ clientId: 'w', subject: 'w' });
    expect(provider.jwksFetches).toBe(1);

    await provider.rotateKey();
    const after = await clientCredentialsToken(provider, 'w', 'w-secret');
    expect(JSON.parse(Buffer.from(after.split('.')[0], 'base64url').toString()).kid).toBe(
      provider.signingKey.kid,
    );
    expect(await verifier.verify(after)).toMatchObject({ clientId: 'w' });
    expect(provider.jwksFetches).toBe(2);
    // the old key is still published: its tokens verify from the cache, with no further fetch
    expect(await verifier.verify(before)).toMatchObject({ clientId: 'w' });
    expect(await verifier.verify(after)).toMatchObject({ clientId: 'w' });
    expect(provider.jwksFetches).toBe(2);
  });
});
