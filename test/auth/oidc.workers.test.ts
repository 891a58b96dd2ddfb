/**
 * Workers signing in with the OpenID Provider's client credentials (SPEC §15.1), against a real
 * oidc-provider: a client-credentials token of a client a WORKER principal names fetches, journals and
 * completes as that worker; an expired token, one of another issuer or audience, one of a disabled
 * worker and a tampered signature are each UNAUTHENTICATED; a person's token never acts as a worker;
 * oidcClientId is unique and for workers only; static worker tokens keep working.
 */
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoProvider, demoAccounts, type DemoProvider } from '../../server/demo/oidc-provider.js';
import { codeOf } from '../helpers/engine.js';
import { CRM_SERVER, Q, REFUND, SUPPORT_TRIAGE } from '../helpers/fixtures.js';
import {
  AUDIENCE,
  clientCredentialsToken,
  type OidcStack,
  PASSWORD,
  startOidcStack,
} from '../helpers/oidc.js';
import { WorkerSim } from '../helpers/worker-sim.js';

const SECRET_A = 'secret-of-worker-a';
const SECRET_B = 'secret-of-worker-b';
const SECRET_C = 'secret-of-unregistered';
const ME = '{ me { id name kind topics } }';
const CREATE = `mutation($input: CreatePrincipalInput!) {
  createPrincipal(input: $input) { principal { id name oidcClientId } token } }`;
const UPDATE = `mutation($input: UpdatePrincipalInput!) { updatePrincipal(input: $input) { id oidcClientId } }`;

let s: OidcStack;
let other: DemoProvider;
let workerA: string;

async function createWorker(name: string, oidcClientId: string) {
  const r = await s.engine.gql(s.engine.adminToken, CREATE, {
    input: { kind: 'WORKER', name, topics: ['abada:agent'], oidcClientId },
  });
  return r;
}

beforeAll(async () => {
  s = await startOidcStack({
    provider: {
      workers: [
        { clientId: 'worker-a', clientSecret: SECRET_A },
        { clientId: 'worker-b', clientSecret: SECRET_B },
        { clientId: 'unregistered', clientSecret: SECRET_C },
      ],
    },
  });
  // another provider issuing a token for the same client id and audience: its issuer is not Abada's
  other = await startDemoProvider({ accounts: demoAccounts(PASSWORD) });
  other.configure(
    { clientId: 'x', clientSecret: 'x', redirectUris: ['http://127.0.0.1/cb'], postLogoutRedirectUris: [] },
    { apiAudience: AUDIENCE, workers: [{ clientId: 'worker-a', clientSecret: SECRET_A }] },
  );
  await s.engine.ok(s.engine.adminToken, Q.deploy, { s: `${CRM_SERVER()}---${SUPPORT_TRIAGE}---${REFUND}` });
  const created = await createWorker('oidc-worker-a', 'worker-a');
  expect(created.errors).toBeUndefined();
  workerA = (created.data as { createPrincipal: { principal: { id: string } } }).createPrincipal.principal.id;
});
afterAll(async () => {
  await s?.close();
  await other?.close();
});

const refusal = async (token: string) => {
  const r = await s.engine.client.as(token).execute(ME);
  return { code: codeOf(r as never), message: r.errors?.[0]?.message ?? '' };
};

async function signedAsProvider(claims: Record<string, unknown>) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: s.provider.signingKey.kid })
    .setIssuer(s.provider.issuer)
    .setIssuedAt()
    .sign(await importJWK(s.provider.signingKey, 'RS256'));
}

describe('workers signing in with client credentials', () => {
  it('fetches, journals and completes a task as the worker its client names', async () => {
    const token = await clientCredentialsToken(s.provider, 'worker-a', SECRET_A);
    const me = (await s.engine.ok(token, ME)) as { me: { id: string; kind: string; name: string } };
    expect(me.me).toMatchObject({ id: workerA, kind: 'WORKER', name: 'oidc-worker-a' });

    const w = new WorkerSim(s.engine, token, 'oidc-w-1');
    await s.engine.ok(s.engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-42' } });
    const task = await w.fetchOne();
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const done = await w.complete(task, { triage: { ticketId: 'T-1', priority: 'high', _confidence: 95 } });
    expect(done.state).toBe('COMPLETED');
    const steps = (await s.engine.ok(
      s.engine.adminToken,
      `query($id: ID!) { externalTask(id: $id) { workerId steps { sequence state } } }`,
      { id: task.id },
    )) as { externalTask: { workerId: string; steps: { sequence: number }[] } };
    expect(steps.externalTask.workerId).toBe('oidc-w-1');
    expect(steps.externalTask.steps.map((x) => x.sequence)).toEqual([1]);
  });

  it('refuses an expired token, another issuer or audience, and a tampered signature', async () => {
    const real = await clientCredentialsToken(s.provider, 'worker-a', SECRET_A);
    const [head, body, sig] = real.split('.');
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    // the same claims with another audience, signed back: only the audience differs
    const cases: [string, string, RegExp][] = [
      [
        'expired',
        await signedAsProvider({ ...payload, iat: undefined, exp: Math.floor(Date.now() / 1000) - 60 }),
        /expired/,
      ],
      ['other issuer', await clientCredentialsToken(other, 'worker-a', SECRET_A), /refused/],
      [
        'other audience',
        await signedAsProvider({ ...payload, iat: undefined, aud: 'https://other.example' }),
        /refused/,
      ],
      ['tampered signature', `${head}.${body}.${flipped}`, /refused/],
      [
        'tampered claims',
        `${head}.${Buffer.from(JSON.stringify({ ...payload, client_id: 'worker-b', sub: 'worker-b' })).toString('base64url')}.${sig}`,
        /refused/,
      ],
      [
        'no worker names the client',
        await clientCredentialsToken(s.provider, 'unregistered', SECRET_C),
        /oidcClientId/,
      ],
    ];
    for (const [what, token, message] of cases) {
      const r = await refusal(token);
      expect(r.code, what).toBe('UNAUTHENTICATED');
      expect(r.message, what).toMatch(message);
    }
    // the real token, untouched, is accepted: the changes above are what was refused
    expect((await refusal(real)).code).toBeUndefined();
  });

  it('refuses the token of a disabled worker at once', async () => {
    const created = await createWorker('oidc-worker-b', 'worker-b');
    const id = (created.data as { createPrincipal: { principal: { id: string } } }).createPrincipal.principal
      .id;
    const token = await clientCredentialsToken(s.provider, 'worker-b', SECRET_B);
    expect((await refusal(token)).code).toBeUndefined();
    await s.engine.ok(s.engine.adminToken, 'mutation($id: ID!) { disablePrincipal(id: $id) { id } }', { id });
    const r = await refusal(token);
    expect(r.code).toBe('UNAUTHENTICATED');
    expect(r.message).toMatch(/disabled/);
    // a fresh token from the provider changes nothing
    expect((await refusal(await clientCredentialsToken(s.provider, 'worker-b', SECRET_B))).code).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('never lets a person’s token act as a worker', async () => {
    await s.signIn('fiona');
    // a token of fiona obtained through the client worker-a: sub is the person, not the client
    const token = await signedAsProvider({
      sub: 'fiona',
      client_id: 'worker-a',
      aud: AUDIENCE,
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    const me = (await s.engine.ok(token, ME)) as { me: { id: string; kind: string } };
    expect(me.me.kind).toBe('HUMAN');
    expect(me.me.id).not.toBe(workerA);
  });

  it('keeps oidcClientId unique and for workers only; an update moves it', async () => {
    const clash = await createWorker('another', 'worker-a');
    expect(codeOf(clash)).toBe('VALIDATION_FAILED');
    expect(clash.errors?.[0].message).toMatch(/already signs in as the principal "oidc-worker-a"/);
    const human = await s.engine.gql(s.engine.adminToken, CREATE, {
      input: { kind: 'HUMAN', name: 'h', groups: ['g'], oidcClientId: 'worker-c' },
    });
    expect(codeOf(human)).toBe('VALIDATION_FAILED');

    const spare = await createWorker('spare', 'spare-client');
    const spareId = (spare.data as { createPrincipal: { principal: { id: string } } }).createPrincipal
      .principal.id;
    const taken = await s.engine.gql(s.engine.adminToken, UPDATE, {
      input: { id: spareId, oidcClientId: 'worker-a' },
    });
    expect(codeOf(taken)).toBe('VALIDATION_FAILED');
    // worker-a gives its client up; the token of worker-a stops acting as it at once
    const token = await clientCredentialsToken(s.provider, 'worker-a', SECRET_A);
    const cleared = await s.engine.ok(s.engine.adminToken, UPDATE, {
      input: { id: workerA, oidcClientId: '' },
    });
    expect(cleared).toEqual({ updatePrincipal: { id: workerA, oidcClientId: null } });
    expect((await refusal(token)).code).toBe('UNAUTHENTICATED');
    await s.engine.ok(s.engine.adminToken, UPDATE, { input: { id: spareId, oidcClientId: 'worker-a' } });
    const me = (await s.engine.ok(token, ME)) as { me: { id: string } };
    expect(me.me.id).toBe(spareId);
  });

  it('keeps static worker tokens working', async () => {
    const token = await s.engine.principal('WORKER', 'static-worker', { topics: ['abada:agent'] });
    expect(((await s.engine.ok(token, ME)) as { me: { kind: string } }).me.kind).toBe('WORKER');
  });
});
