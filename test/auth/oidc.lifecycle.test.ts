/**
 * A session follows the provider and Abada's own lifecycle (SPEC §11, §12), against a real oidc-provider:
 * a group removed at the provider is gone after the refresh interval (shortened here) and a decision
 * that needs it is refused; without a refresh token the groups come from userinfo, and a person the
 * provider no longer knows loses the session; a principal disabled in Abada is refused at once on HTTP
 * and its open graphql-ws connection (authenticated by the cookie) is closed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Q } from '../helpers/fixtures.js';
import { type OidcStack, startOidcStack } from '../helpers/oidc.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

const ME = '{ me { id name groups } }';
const REFRESH_MS = 1200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let s: OidcStack;
beforeAll(async () => {
  s = await startOidcStack({ env: { ABADA_OIDC_REFRESH_MINUTES: String(REFRESH_MS / 60_000) } });
});
afterAll(() => s?.close());

/** A refund waiting for finance-leads. */
async function pendingRefund() {
  const { worker } = await setupSeeds(s.engine);
  await s.engine.ok(s.engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
  const w = new WorkerSim(s.engine, worker);
  const task = await w.fetchOne();
  await w.model(task, 1, 'STARTED');
  await w.model(task, 1, 'COMPLETED');
  await w.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89, currency: 'EUR' });
  return (await s.engine.ok(s.engine.adminToken, Q.approvals, { state: 'PENDING' })).approvals.edges[0].node;
}

describe('a session follows the provider', () => {
  it('loses a group removed at the provider within the refresh interval; the decision needing it is refused', async () => {
    const approval = await pendingRefund();
    const jar = await s.signIn('fiona');
    expect((await s.gql(jar, ME)).data.me.groups).toEqual(['finance', 'finance-leads']);
    s.provider.accounts.get('fiona')!.groups = ['finance'];
    await sleep(REFRESH_MS + 300);
    expect((await s.gql(jar, ME)).data.me.groups).toEqual(['finance']);
    const decided = await s.gql(jar, Q.decide, {
      input: { approvalId: approval.id, decision: 'APPROVE', digest: approval.digest },
    });
    expect(decided.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    // back at the provider, back in Abada at the next refresh
    s.provider.accounts.get('fiona')!.groups = ['finance', 'finance-leads'];
    await sleep(REFRESH_MS + 300);
    const approved = await s.gql(jar, Q.decide, {
      input: { approvalId: approval.id, decision: 'APPROVE', digest: approval.digest },
    });
    expect(approved.data?.decideApproval.state).toBe('APPROVED');
  });

  it('refreshes through userinfo without a refresh token, and ends the session when the provider no longer knows the person', async () => {
    const noRefresh = await startOidcStack({
      refreshTokens: false,
      databaseUrl: s.engine.databaseUrl,
      env: { ABADA_OIDC_REFRESH_MINUTES: String(REFRESH_MS / 60_000) },
    });
    try {
      const jar = await noRefresh.signIn('sam');
      noRefresh.provider.accounts.get('sam')!.groups = ['support', 'finance'];
      await sleep(REFRESH_MS + 300);
      expect((await noRefresh.gql(jar, ME)).data.me.groups).toEqual(['support', 'finance']);
      noRefresh.provider.accounts.delete('sam');
      await sleep(REFRESH_MS + 300);
      const after = await noRefresh.session(jar);
      expect(after.signedIn).toBe(false);
      expect(after.refusal).toContain('no longer confirms');
      const r = await noRefresh.gql(jar, ME, {}, null);
      expect(r.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
      expect(r.errors?.[0].message).toContain('no longer confirms');
    } finally {
      await noRefresh.close();
    }
  });
});

describe('the background refresh', () => {
  it('closes an idle person’s graphql-ws connection (4409) when the provider removed a group; the next request sees the new groups', async () => {
    const jar = await s.signIn('sam');
    s.provider.accounts.get('sam')!.groups = ['support'];
    const ws = s.wsClient(jar);
    let closed: number | null = null;
    ws.on('closed', (e) => {
      closed = (e as CloseEvent).code;
    });
    const acked = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
    ws.subscribe(
      { query: 'subscription { approvalOpened { id } }' },
      { next: () => {}, error: () => {}, complete: () => {} },
    );
    await acked;
    s.provider.accounts.get('sam')!.groups = [];
    // no request from sam: only the sweep can notice
    await expect.poll(() => closed, { timeout: 3 * REFRESH_MS + 2000 }).toBe(4409);
    expect((await s.gql(jar, ME)).data.me.groups).toEqual([]);
    await ws.dispose();
  });
});

describe('a principal disabled in Abada', () => {
  it('loses its session at once, on HTTP and on an open graphql-ws connection', async () => {
    const jar = await s.signIn('sam');
    const id = (await s.gql(jar, ME)).data.me.id;
    const ws = s.wsClient(jar);
    let closed: { code: number; reason: string } | null = null;
    ws.on('closed', (e) => {
      closed = { code: (e as CloseEvent).code, reason: (e as CloseEvent).reason };
    });
    const acked = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
    ws.subscribe(
      { query: 'subscription { approvalOpened { id } }' },
      { next: () => {}, error: () => {}, complete: () => {} },
    );
    await acked;

    await s.engine.ok(s.engine.adminToken, 'mutation($id: ID!) { disablePrincipal(id: $id) { id } }', { id });
    const r = await s.gql(jar, ME);
    expect(r.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    await expect.poll(() => closed?.code, { timeout: 5000 }).toBe(4401);
    // signing in again does not bring it back
    await expect(s.signIn('sam')).rejects.toThrow(/403/);
    await ws.dispose();
  });

  it('accepts the cookie on graphql-ws only from the dashboard’s origin', async () => {
    const jar = await s.signIn('fiona');
    const ws = s.wsClient(jar, 'https://evil.example');
    const outcome = await new Promise<string>((resolve) => {
      ws.on('connected', () => resolve('connected'));
      ws.on('closed', (e) => resolve(`closed ${(e as CloseEvent).code}`));
      ws.subscribe(
        { query: 'subscription { approvalOpened { id } }' },
        { next: () => {}, error: () => {}, complete: () => {} },
      );
    });
    expect(outcome).toBe('closed 4403');
    await ws.dispose();
  });
});
