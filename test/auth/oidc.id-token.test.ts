/**
 * A forged or expired ID token is refused (SPEC §12). The real oidc-provider sits behind a proxy that is
 * its public issuer; the proxy passes everything through but can rewrite the ID token in the token
 * endpoint's answer: another person's subject under the provider's signature (a broken signature), a
 * token signed with an attacker's key, or one re-signed with the provider's own key but already expired.
 * Each is refused and no session is opened; untouched, the same sign-in works.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProvider, demoAccounts, startDemoProvider } from '../../server/demo/oidc-provider.js';
import { CookieJar, loginAtProvider, request, startSignIn } from '../../server/demo/oidc-signin.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

const PASSWORD = 'pw';
type Mode = 'none' | 'other-subject' | 'attacker-key' | 'expired';
let mode: Mode = 'none';
let proxy: http.Server;
let provider: DemoProvider;
let engine: TestEngine;

async function rewrite(idToken: string): Promise<string> {
  const claims = decodeJwt(idToken);
  const [header, , signature] = idToken.split('.');
  if (mode === 'other-subject') {
    const body = Buffer.from(JSON.stringify({ ...claims, sub: 'ada' })).toString('base64url');
    return `${header}.${body}.${signature}`;
  }
  const key =
    mode === 'attacker-key'
      ? (await generateKeyPair('RS256')).privateKey
      : await importJWK(provider.signingKey, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  const times = mode === 'expired' ? { iat: now - 7200, exp: now - 3600 } : {};
  return new SignJWT({ ...claims, ...times })
    .setProtectedHeader({ alg: 'RS256', kid: provider.signingKey.kid })
    .sign(key);
}

/** Forwards to the provider (Host kept: it builds its URLs from it); rewrites the token endpoint's ID token. */
async function forward(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const upstream = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const out = http.request(
      { host: '127.0.0.1', port: provider.port, path: req.url, method: req.method, headers: req.headers },
      resolve,
    );
    out.on('error', reject);
    out.end(Buffer.concat(chunks));
  });
  const parts: Buffer[] = [];
  for await (const c of upstream) parts.push(c as Buffer);
  let body = Buffer.concat(parts);
  if (req.url?.startsWith('/token') && mode !== 'none' && upstream.statusCode === 200) {
    const json = JSON.parse(body.toString());
    json.id_token = await rewrite(json.id_token);
    body = Buffer.from(JSON.stringify(json));
  }
  const headers = { ...upstream.headers };
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  res.writeHead(upstream.statusCode ?? 502, headers);
  res.end(body);
}

beforeAll(async () => {
  proxy = http.createServer((req, res) => {
    forward(req, res).catch((e) => res.writeHead(502).end(String(e)));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  provider = await startDemoProvider({ accounts: demoAccounts(PASSWORD), issuer });
  const secret = randomBytes(16).toString('hex');
  engine = await startTestEngine({
    env: { ABADA_OIDC_ISSUER: issuer, ABADA_OIDC_CLIENT_ID: 'abada', ABADA_OIDC_CLIENT_SECRET: secret },
  });
  provider.configure({
    clientId: 'abada',
    clientSecret: secret,
    redirectUris: [`${engine.url}/auth/callback`],
    postLogoutRedirectUris: [`${engine.url}/`],
  });
});
afterAll(async () => {
  await engine?.close();
  await provider?.close();
  proxy?.closeAllConnections();
  proxy?.close();
});

async function signInAs(user: string): Promise<{ status: number; text: string; session: boolean }> {
  const jar = new CookieJar();
  const authorization = await startSignIn(jar, engine.url);
  const res = await request(jar, await loginAtProvider(jar, authorization, user, PASSWORD));
  return {
    status: res.status,
    text: await res.text(),
    session: res.headers.getSetCookie().some((c) => /^abada_session=[^;]/.test(c)),
  };
}

describe('the ID token', () => {
  for (const m of ['other-subject', 'attacker-key', 'expired'] as const) {
    it(`is refused when ${m}`, async () => {
      mode = m;
      const r = await signInAs('sam');
      expect(r.status).toBe(400);
      expect(r.text).toContain('Sign-in failed');
      expect(r.session).toBe(false);
    });
  }

  it('untouched, signs the person in', async () => {
    mode = 'none';
    const r = await signInAs('sam');
    expect(r.status).toBe(303);
    expect(r.session).toBe(true);
  });
});
