/**
 * The approver's read side: `approvals(state, mine, first, after)` pages with cursors and a total, scoped
 * to the caller's groups; `approval(id)` shows earlier proposals of the same call (with the diff) and
 * every decision attempt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { approvalOf, D, decide, deployPay, startAndPropose, tool } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;
let lead: string;
let support: string;
let workerToken: string;
const KEYS = ['page', 'again'];
const ids: string[] = [];

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, KEYS);
  workerToken = await engine.principal('WORKER', 'w', { topics: KEYS });
  w = new WorkerSim(engine, workerToken, 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  lead = await engine.principal('HUMAN', 'lee', { groups: ['finance-leads'] });
  support = await engine.principal('HUMAN', 'sam', { groups: ['support'] });
  // Five approvals for finance, the last of them a two-level one (finance, then finance-leads).
  for (const amount of [10, 20, 30, 40, 5000]) {
    ids.push((await startAndPropose(w, 'page', 'pay/refund', { orderId: `O-${amount}`, amount })).approvalId);
  }
});
afterAll(() => engine?.close());

/** A page of the approvals list as D.approvals selects it. */
interface ApprovalPage {
  approvals: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { cursor: string; node: { id: string } }[];
  };
}

async function allPages(token: string, vars: Record<string, unknown>) {
  const seen: string[] = [];
  const totals: number[] = [];
  let after: string | null = null;
  for (let i = 0; i < 10; i++) {
    const d: ApprovalPage = await engine.ok(token, D.approvals, { ...vars, after });
    totals.push(d.approvals.totalCount);
    seen.push(...d.approvals.edges.map((e) => e.node.id));
    expect(d.approvals.edges.length).toBeLessThanOrEqual((vars.first as number) ?? 50);
    if (!d.approvals.pageInfo.hasNextPage) return { seen, totals, pages: i + 1 };
    after = d.approvals.pageInfo.endCursor;
    expect(after).toBe(d.approvals.edges.at(-1)?.cursor);
  }
  throw new Error('pagination did not end');
}

describe('approvals queries', () => {
  it('pages through approvals with first/after, totalCount on every page, no repeats', async () => {
    const r = await allPages(fin, { state: 'PENDING', first: 2 });
    expect(r.pages).toBe(3);
    expect(r.totals).toEqual([5, 5, 5]);
    expect(new Set(r.seen).size).toBe(5);
    expect([...r.seen].sort()).toEqual([...ids].sort());
    const admin = await allPages(engine.adminToken, { first: 4 });
    expect(admin.totals[0]).toBe(5);
    expect(admin.pages).toBe(2);
    expect(codeOf(await engine.gql(fin, D.approvals, { first: 0 }))).toBe('VALIDATION_FAILED');
    expect(codeOf(await engine.gql(fin, D.approvals, { first: 201 }))).toBe('VALIDATION_FAILED');
  });

  it('a human sees only the approvals of their groups; a worker none', async () => {
    const s = await engine.ok(support, D.approvals, {});
    expect(s.approvals).toMatchObject({ totalCount: 0, edges: [] });
    for (const id of ids) expect((await engine.ok(support, D.approval, { id })).approval).toBeNull();
    // finance-leads decide the second level of the 5000 refund: they see that one, and only that one,
    // as approval(id) lets them open it.
    const l = await engine.ok(lead, D.approvals, { state: 'PENDING', mine: false });
    expect(l.approvals.edges.map((e) => e.node.id)).toEqual([ids[4]]);
    // "mine" (the default for people) narrows to what the caller can decide now: level 1 is finance's.
    const mine = await engine.ok(lead, D.approvals, { state: 'PENDING', mine: true });
    expect(mine.approvals.totalCount).toBe(0);
    expect((await engine.ok(lead, D.approvals, { state: 'PENDING' })).approvals.totalCount).toBe(0);
    const lv = await approvalOf(engine, lead, ids[4]);
    expect(lv).toMatchObject({ level: 1, levels: 2, candidateGroups: ['finance'] });
    await decide(engine, fin, { approvalId: ids[4], decision: 'APPROVE', digest: lv.digest });
    const now = await engine.ok(lead, D.approvals, { state: 'PENDING' });
    expect(now.approvals.edges.map((e) => e.node.id)).toEqual([ids[4]]);
    // fran decided level 1 and can still find it (not hers to decide any more).
    const fr = await engine.ok(fin, D.approvals, { state: 'PENDING', mine: false, first: 50 });
    expect(fr.approvals.edges.map((e) => e.node.id)).toContain(ids[4]);
    const frMine = await engine.ok(fin, D.approvals, { state: 'PENDING', mine: true });
    expect(frMine.approvals.edges.map((e) => e.node.id)).not.toContain(ids[4]);
    expect(codeOf(await engine.gql(workerToken, D.approvals, {}))).toBe('FORBIDDEN');
    expect((await engine.gql(workerToken, D.approval, { id: ids[0] })).data?.approval ?? null).toBeNull();
    // State filter: decided approvals leave the PENDING list.
    const a0 = await approvalOf(engine, fin, ids[0]);
    await decide(engine, fin, { approvalId: ids[0], decision: 'APPROVE', digest: a0.digest });
    const pending = await engine.ok(fin, D.approvals, { state: 'PENDING' });
    expect(pending.approvals.totalCount).toBe(3);
    const approved = await engine.ok(fin, D.approvals, { state: 'APPROVED' });
    expect(approved.approvals.edges.map((e) => e.node.id)).toEqual([ids[0]]);
  });

  it("approval(id) shows an earlier attempt's proposal of the same call with the diff, and decisions", async () => {
    const first = await startAndPropose(w, 'again', 'pay/refund', { orderId: '5531', amount: 89 });
    await decide(engine, fin, {
      approvalId: first.approvalId,
      decision: 'REJECT',
      digest: first.digest,
      comment: 'Check the order total first.',
    });
    const t1 = await w.fetchOne({ topic: 'again' });
    expect((await w.failRaw(t1, 'MODEL_ERROR', 0)).data?.failTask).toMatchObject({ attempt: 2 });
    const t2 = await w.fetchOne({ topic: 'again' });
    const second = await tool(w, t2, 1, 'pay/refund', 'PROPOSED', {
      orderId: '5531',
      amount: 80,
      note: 'partial',
    });
    const a = await approvalOf(engine, fin, second.step.approvalId!);
    expect(a).toMatchObject({ attempt: 2, sequence: 1, state: 'PENDING', decisions: [] });
    expect(a.earlierProposals).toEqual([
      {
        approvalId: first.approvalId,
        attempt: 1,
        sequence: 1,
        state: 'REJECTED',
        digest: first.digest,
        changes: [
          { path: 'amount', before: 89, after: 80 },
          { path: 'note', before: null, after: 'partial' },
        ],
      },
    ]);
    const f = await approvalOf(engine, fin, first.approvalId);
    expect(f.earlierProposals).toEqual([]);
    expect(f.decisions).toEqual([
      {
        level: 1,
        decidedBy: 'fran',
        decision: 'REJECT',
        digest: first.digest,
        editedDigest: null,
        comment: 'Check the order total first.',
        outcome: 'ACCEPTED',
      },
    ]);
  });
});
