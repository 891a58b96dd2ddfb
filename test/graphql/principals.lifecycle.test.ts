/**
 * Principals' lifecycle (SPEC §11) on two engines sharing one database: list and paging, update of
 * groups (a decision needing the removed group is refused), disable (the token is refused at once on
 * both engines, not after the 5 s identity cache, and an open graphql-ws subscription is closed),
 * rotate (the old token stops, the new one works), the last admin of a project, and the record in
 * principal_events with the admin who did each change.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { decide, tool } from '../engine/approvals/setup.js';
import { STARTED_MS, settle, subscribe, type Subscriber } from '../helpers/ws.js';
import { waitFor } from '../helpers/wait.js';

const P = {
  list: `query($kind: PrincipalKind, $first: Int, $after: String) {
    principals(kind: $kind, first: $first, after: $after) {
      totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name kind groups disabled } }
    }
  }`,
  update: `mutation($input: UpdatePrincipalInput!) { updatePrincipal(input: $input) { id groups topics } }`,
  disable: `mutation($id: ID!) { disablePrincipal(id: $id) { id disabled disabledAt } }`,
  rotate: `mutation($id: ID!) { rotatePrincipalToken(id: $id) { token principal { id } } }`,
  create: `mutation($input: CreatePrincipalInput!) { createPrincipal(input: $input) { token principal { id } } }`,
  me: '{ me { id name groups } }',
};

type Edge = { cursor: string; node: { id: string; name: string; kind: string } };

let a: TestEngine;
let b: TestEngine;
let w: WorkerSim;
const subs: Subscriber[] = [];

async function create(kind: string, name: string, extra: Record<string, unknown> = {}, as = a.adminToken) {
  const d = await a.ok(as, P.create, { input: { kind, name, ...extra } });
  return { id: d.createPrincipal.principal.id as string, token: d.createPrincipal.token as string };
}

/** Both engines have `token` cached (a `me` call each), so a refusal afterwards is not a cache miss. */
async function warm(token: string) {
  await a.ok(token, P.me);
  await b.ok(token, P.me);
}

/** Waits until engine `e` refuses `token` with UNAUTHENTICATED; returns how long it took. */
async function refusedWithin(e: TestEngine, token: string): Promise<number> {
  const t0 = Date.now();
  await waitFor('refusal', async () => codeOf(await e.gql(token, P.me)) === 'UNAUTHENTICATED', 4000);
  return Date.now() - t0;
}

beforeAll(async () => {
  a = await startTestEngine();
  const seeded = await setupSeeds(a);
  b = await startTestEngine({ databaseUrl: a.databaseUrl });
  w = new WorkerSim(a, seeded.worker, 'agent-worker-a');
});
afterAll(async () => {
  for (const s of subs) await s.dispose().catch(() => {});
  await b?.close();
  await a?.close();
});

describe('principals', () => {
  it('lists principals by kind, newest first, in keyset pages; another project sees only its own', async () => {
    for (const n of ['h1', 'h2', 'h3']) await create('HUMAN', `list-${n}`, { groups: ['support'] });
    const all = (await a.ok(a.adminToken, P.list, { kind: 'HUMAN', first: 200 })).principals;
    expect(all.edges.every((e: Edge) => e.node.kind === 'HUMAN')).toBe(true);
    const one = (await a.ok(a.adminToken, P.list, { kind: 'HUMAN', first: 2 })).principals;
    expect(one.edges.map((e: Edge) => e.node.name)).toEqual(['list-h3', 'list-h2']);
    expect(one.pageInfo.hasNextPage).toBe(true);
    expect(one.totalCount).toBe(all.totalCount);
    const two = (await a.ok(a.adminToken, P.list, { kind: 'HUMAN', first: 2, after: one.pageInfo.endCursor }))
      .principals;
    expect(two.edges[0].node.name).toBe('list-h1');
    const other = await create('ADMIN', 'list-other-admin', { projectId: 'list-other' });
    const seen = (await a.ok(other.token, P.list, {})).principals;
    expect(seen.edges.map((e: Edge) => e.node.name)).toEqual(['list-other-admin']);
    const hidden = await a.gql(other.token, P.disable, { id: two.edges[0].node.id });
    expect(codeOf(hidden)).toBe('NOT_FOUND');
    const bad = await a.gql(a.adminToken, P.list, { after: 'nonsense' });
    expect(codeOf(bad)).toBe('VALIDATION_FAILED');
  });

  it('update: a decision needing the removed group is refused at once, on either engine', async () => {
    const fiona = await create('HUMAN', 'upd-fiona', { groups: ['finance', 'finance-leads'] });
    await a.ok(a.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
    const task = await w.fetchOne();
    const j = await tool(w, task, 1, 'crm/refund', 'PROPOSED', {
      orderId: '5531',
      amount: 89,
      currency: 'EUR',
    });
    await warm(fiona.token);
    const upd = await a.ok(a.adminToken, P.update, { input: { id: fiona.id, groups: ['finance'] } });
    expect(upd.updatePrincipal.groups).toEqual(['finance']);
    const input = { approvalId: j.step.approvalId!, decision: 'APPROVE' as const, digest: j.step.digest };
    expect(codeOf(await decide(a, fiona.token, input))).toBe('FORBIDDEN');
    await waitFor(
      'engine B sees the new groups',
      async () => {
        const me = await b.ok(fiona.token, P.me);
        return me.me.groups.length === 1;
      },
      1000,
    );
    expect(codeOf(await decide(b, fiona.token, input))).toBe('FORBIDDEN');
    const badTopics = await a.gql(a.adminToken, P.update, { input: { id: fiona.id, topics: ['mail'] } });
    expect(codeOf(badTopics)).toBe('VALIDATION_FAILED');
    expect(badTopics.errors?.[0].extensions?.errors).toEqual([
      { path: 'topics', message: 'Only worker principals fetch topics; leave topics empty.' },
    ]);
  });

  it('disable: the token is refused at once on both engines and its subscription is closed', async () => {
    const sam = await create('HUMAN', 'dis-sam', { groups: ['support'] });
    await warm(sam.token);
    const s = subscribe(b.url, sam.token, 'subscription { approvalChanged { id } }');
    subs.push(s);
    await s.connected;
    await settle(STARTED_MS);
    const d = await a.ok(a.adminToken, P.disable, { id: sam.id });
    expect(d.disablePrincipal.disabled).toBe(true);
    const onA = await a.gql(sam.token, P.me);
    expect(codeOf(onA)).toBe('UNAUTHENTICATED');
    expect(onA.errors?.[0].message).toMatch(/was disabled .*Ask an admin for a new principal/);
    expect(await refusedWithin(b, sam.token)).toBeLessThan(1000);
    await waitFor('the subscription to close', () => s.closed, 2000);
    expect(s.closed).toEqual({ code: 4401, reason: 'Unauthorized: the principal was disabled' });
    // a new connection is refused too, and disabling is final
    const again = subscribe(a.url, sam.token, 'subscription { approvalChanged { id } }');
    subs.push(again);
    await expect(again.connected).rejects.toThrow(/4403/);
    expect(codeOf(await a.gql(a.adminToken, P.rotate, { id: sam.id }))).toBe('VALIDATION_FAILED');
    expect(codeOf(await a.gql(a.adminToken, P.update, { input: { id: sam.id, groups: [] } }))).toBe(
      'VALIDATION_FAILED',
    );
  });

  it('rotate: the old token stops at once on both engines, the new one works, the socket closes', async () => {
    const bot = await create('WORKER', 'rot-bot', { topics: ['mail'] });
    await warm(bot.token);
    const s = subscribe(a.url, bot.token, 'subscription { taskChanged { id } }');
    subs.push(s);
    await s.connected;
    await settle(STARTED_MS);
    const r = await b.ok(b.adminToken, P.rotate, { id: bot.id });
    const fresh = r.rotatePrincipalToken.token as string;
    expect(fresh).not.toBe(bot.token);
    expect(codeOf(await b.gql(bot.token, P.me))).toBe('UNAUTHENTICATED');
    expect(await refusedWithin(a, bot.token)).toBeLessThan(1000);
    expect((await a.ok(fresh, P.me)).me.id).toBe(bot.id);
    expect((await b.ok(fresh, P.me)).me.id).toBe(bot.id);
    await waitFor('the old socket to close', () => s.closed, 2000);
    expect(s.closed?.code).toBe(4401);
  });

  it('the last enabled admin of a project cannot be disabled; the bootstrap admin is not stored', async () => {
    const first = await create('ADMIN', 'solo-1', { projectId: 'solo' });
    const self = await a.gql(first.token, P.disable, { id: first.id });
    expect(codeOf(self)).toBe('VALIDATION_FAILED');
    expect(self.errors?.[0].message).toMatch(/last enabled admin of project solo/);
    const second = await create('ADMIN', 'solo-2', { projectId: 'solo' });
    // an admin may disable itself while another admin remains
    expect((await a.ok(first.token, P.disable, { id: first.id })).disablePrincipal.disabled).toBe(true);
    expect(codeOf(await a.gql(a.adminToken, P.disable, { id: second.id }))).toBe('VALIDATION_FAILED');
    const boot = await a.gql(a.adminToken, P.disable, { id: '00000000-0000-0000-0000-00000000ad01' });
    expect(codeOf(boot)).toBe('FORBIDDEN');
    expect(boot.errors?.[0].message).toMatch(/ABADA_ADMIN_TOKEN/);
    expect(codeOf(await a.gql(second.token, P.list, {}))).toBeUndefined();
  });

  it('records each change with the admin who did it, and never a token', async () => {
    const h = await create('HUMAN', 'rec-h', { groups: ['a'] });
    await a.ok(a.adminToken, P.update, { input: { id: h.id, groups: ['b'] } });
    await a.ok(a.adminToken, P.rotate, { id: h.id });
    await a.ok(a.adminToken, P.disable, { id: h.id });
    const rows = (
      await a.context.db.execute(
        sql`SELECT * FROM principal_events WHERE principal_id = ${h.id} ORDER BY created_at, action`,
      )
    ).rows as Record<string, unknown>[];
    expect(rows.map((r) => r.action)).toEqual(['CREATED', 'UPDATED', 'TOKEN_ROTATED', 'DISABLED']);
    expect(rows.every((r) => r.actor_name === 'bootstrap-admin')).toBe(true);
    expect(rows[1]).toMatchObject({
      before: { groups: ['a'], topics: [] },
      after: { groups: ['b'], topics: [] },
    });
    expect(Object.keys(rows[0]).some((k) => k.includes('token'))).toBe(false);
    await expect(
      a.context.db.execute(sql`DELETE FROM principal_events WHERE principal_id = ${h.id}`),
    ).rejects.toThrow();
  });
});
