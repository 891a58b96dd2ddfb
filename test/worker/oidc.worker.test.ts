/**
 * The Agent Worker signed in with OpenID client credentials (SPEC §15.1) against a real oidc-provider
 * whose access tokens live 3 s: the worker (in-process, the code `npm run worker` runs) fetches its
 * token with openid-client, renews it before it expires and triages customers across a run several
 * lifetimes long; no call is ever refused (a refused token would end the worker as fatal). The worker
 * principal is the engine's first-party worker (ABADA_FIRST_PARTY_WORKERS).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProvider, demoAccounts, startDemoProvider } from '../../server/demo/oidc-provider.js';
import { loadWorkerConfig, workerConfig } from '../../server/worker/config.js';
import { renewalTime } from '../../server/worker/credentials.js';
import { startWorker, type WorkerHandle } from '../../server/worker/loop.js';
import { AUDIENCE, PASSWORD } from '../helpers/oidc.js';
import { allAtNode, type Harness, startHarness, startProcess } from './helpers.js';

const TTL_S = 3;
let provider: DemoProvider;
let h: Harness;
let worker: WorkerHandle | null = null;
const logs: Record<string, unknown>[] = [];

beforeAll(async () => {
  provider = await startDemoProvider({ accounts: demoAccounts(PASSWORD) });
  h = await startHarness({
    env: {
      ABADA_OIDC_ISSUER: provider.issuer,
      ABADA_OIDC_CLIENT_ID: 'abada',
      ABADA_OIDC_CLIENT_SECRET: 'abada-secret',
      ABADA_OIDC_AUDIENCE: AUDIENCE,
      ABADA_FIRST_PARTY_WORKERS: 'agent-worker-oidc:agent-client',
    },
  });
  provider.configure(
    {
      clientId: 'abada',
      clientSecret: 'abada-secret',
      redirectUris: [`${h.engine.url}/auth/callback`],
      postLogoutRedirectUris: [],
    },
    {
      apiAudience: AUDIENCE,
      workers: [{ clientId: 'agent-client', clientSecret: 'agent-secret' }],
      accessTokenTtl: TTL_S,
    },
  );
});
afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await provider?.close();
});

function capture() {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

describe('the Agent Worker with client credentials', () => {
  it('renews its token before expiry across a run longer than the token’s lifetime', async () => {
    const startedAt = Date.now();
    worker = await startWorker(
      workerConfig({
        engineUrl: h.engine.url,
        oidc: {
          issuer: provider.issuer,
          clientId: 'agent-client',
          clientSecret: 'agent-secret',
          resource: AUDIENCE,
        },
        workerId: 'oidc-agent',
        modelBaseUrl: h.model.url,
        pollMs: 500,
        lockMs: 5000,
      }),
      { logger: capture() },
    );
    const first = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'Parcel lost' });
    await allAtNode(h, [first], 'notify_customer', 20_000);
    // keep the worker polling past two lifetimes, then give it another customer
    await new Promise((r) => setTimeout(r, Math.max(0, startedAt + 2.2 * TTL_S * 1000 - Date.now())));
    h.model.reset();
    const second = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'Still lost' });
    const [done] = await allAtNode(h, [second], 'notify_customer', 20_000);
    expect(done.tasks[0]).toMatchObject({ state: 'COMPLETED', workerId: 'oidc-agent' });
    expect(worker.fatal).toBeNull();
    const renewals = logs.filter((l) => l.event === 'worker.token_renewed');
    expect(renewals.length).toBeGreaterThanOrEqual(3);
    expect(renewals[0].expiresInS).toBe(TTL_S);
    expect(logs.filter((l) => l.event === 'engine.unreachable')).toEqual([]);
  }, 60_000);

  it('renews 60 s before expiry, at 80 % of a short lifetime, and at least a second early', () => {
    expect(renewalTime(0, 3600)).toBe(3_540_000);
    expect(renewalTime(0, 300)).toBe(240_000);
    expect(renewalTime(0, 10)).toBe(8_000);
    expect(renewalTime(0, 3)).toBe(2_000);
  });

  it('reads its sign-in from the environment, and refuses half a configuration', () => {
    const base = { ABADA_URL: 'http://127.0.0.1:1' };
    const c = loadWorkerConfig({
      ...base,
      ABADA_OIDC_ISSUER: 'http://127.0.0.1:2',
      ABADA_WORKER_OIDC_CLIENT_ID: 'w',
      ABADA_WORKER_OIDC_CLIENT_SECRET: 's',
      ABADA_OIDC_AUDIENCE: AUDIENCE,
    });
    expect(c.oidc).toEqual({
      issuer: 'http://127.0.0.1:2',
      clientId: 'w',
      clientSecret: 's',
      resource: AUDIENCE,
    });
    expect(() => loadWorkerConfig({ ...base, ABADA_WORKER_OIDC_CLIENT_ID: 'w' })).toThrow(
      /needs ABADA_OIDC_ISSUER, ABADA_WORKER_OIDC_CLIENT_ID and ABADA_WORKER_OIDC_CLIENT_SECRET/,
    );
    expect(() =>
      loadWorkerConfig({
        ...base,
        ABADA_TOKEN: 't',
        ABADA_OIDC_ISSUER: 'http://127.0.0.1:2',
        ABADA_WORKER_OIDC_CLIENT_ID: 'w',
        ABADA_WORKER_OIDC_CLIENT_SECRET: 's',
      }),
    ).toThrow(/either ABADA_TOKEN or/);
    expect(() => loadWorkerConfig(base)).toThrow(/ABADA_TOKEN is required/);
  });
});
