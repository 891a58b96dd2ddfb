/**
 * dailyStats against the database: the test creates approvals (decided and not), priced model calls and
 * incidents, spreads some of them over earlier days, then compares every number the GraphQL field returns
 * with what it computes itself from the raw rows. Another project's admin sees only zeros.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIncident } from '../../../server/engine/incidents/index.js';
import { graphql } from '../../../server/client/index.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../../helpers/worker-sim.js';

const STATS = graphql(`query($d: Int) { dailyStats(days: $d) { from to
  approvals { day opened decided medianDecisionSeconds }
  modelCost { day model costUsd inputTokens outputTokens }
  incidents { day opened } } }`);

let engine: TestEngine;
let fiona: string;
let w: WorkerSim;

const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function proposeRefund(amount: number) {
  const { startProcess } = await engine.ok(engine.adminToken, Q.start, {
    key: 'refund',
    v: { customerId: 'C-42', message: `parcel lost (${amount})` },
  });
  const t = await w.fetchOne();
  expect(t.processInstanceId).toBe(startProcess.id);
  await w.model(t, 1, 'STARTED');
  await w.model(t, 1, 'COMPLETED');
  await w.tool(t, 2, 'crm/refund', 'PROPOSED', { orderId: `O-${amount}`, amount, currency: 'EUR' });
  const d = await engine.ok(engine.adminToken, Q.approvals, { state: 'PENDING' });
  const proposed = d.approvals.edges.map((e) => e.node).find((n) => n.taskId === t.id);
  if (!proposed) throw new Error(`no approval proposed for task ${t.id}`);
  return proposed;
}

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  w = new WorkerSim(engine, worker);
  fiona = await engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
  // all four proposed first (a decided task is open again and would be the next one fetched); one stays
  // pending. Above 20 EUR: the demo refund runs by itself at or below.
  const proposed = [];
  for (const amount of [30, 40, 50, 60]) proposed.push(await proposeRefund(amount));
  const decided = [];
  for (const a of proposed.slice(0, 3)) {
    await engine.ok(fiona, Q.decide, { input: { approvalId: a.id, decision: 'APPROVE', digest: a.digest } });
    decided.push(a.id);
  }
  const db = engine.context.db;
  // spread the work over the window: one approval opened 3 days ago and decided 2 days ago, one opened
  // and decided 5 days ago after 90 minutes; a model call and an incident of 3 days ago
  await db.execute(sql`UPDATE approvals SET created_at = now() - interval '3 days',
    decided_at = now() - interval '2 days' WHERE id = ${decided[0]}`);
  await db.execute(sql`UPDATE approvals SET created_at = now() - interval '5 days' - interval '90 minutes',
    decided_at = now() - interval '5 days' WHERE id = ${decided[1]}`);
  await db.execute(sql`UPDATE steps SET created_at = now() - interval '3 days'
    WHERE kind = 'MODEL_CALL' AND ctid = (SELECT ctid FROM steps WHERE kind = 'MODEL_CALL' LIMIT 1)`);
  for (const type of ['TASK_FAILED', 'TOOL_OUTCOME_UNKNOWN', 'TASK_FAILED']) {
    await openIncident(db, { projectId: 'default', type, message: 'e2e' });
  }
  await db.execute(sql`UPDATE incidents SET created_at = now() - interval '3 days'
    WHERE id = (SELECT id FROM incidents ORDER BY created_at LIMIT 1)`);
  // outside the 14-day window: must not be counted
  await openIncident(db, { projectId: 'default', type: 'TASK_FAILED', message: 'old' });
  await db.execute(sql`UPDATE incidents SET created_at = now() - interval '20 days' WHERE message = 'old'`);
});

afterAll(async () => engine?.close());

describe('dailyStats', () => {
  it('equals the numbers computed from the rows, day by day', async () => {
    const { dailyStats: s } = await engine.ok(fiona, STATS, { d: 14 });
    const db = engine.context.db;
    const appr = (await db.execute(sql`SELECT created_at, decided_at FROM approvals`)).rows as {
      created_at: Date;
      decided_at: Date | null;
    }[];
    const cost = (
      await db.execute(sql`SELECT s.created_at, s.model, s.cost_usd, s.usage FROM steps s
      WHERE s.kind = 'MODEL_CALL' AND s.usage IS NOT NULL`)
    ).rows as { created_at: Date; model: string; cost_usd: number | null }[];
    const inc = (await db.execute(sql`SELECT created_at FROM incidents`)).rows as { created_at: Date }[];
    expect(s.approvals).toHaveLength(14);
    expect(s.to).toBe(utcDay(new Date()));
    expect(s.from).toBe(s.approvals[0].day);
    for (const d of s.approvals) {
      const opened = appr.filter((r) => utcDay(new Date(r.created_at)) === d.day).length;
      const dec = appr.filter((r) => r.decided_at && utcDay(new Date(r.decided_at)) === d.day);
      const secs = dec.map(
        (r) => (new Date(r.decided_at!).getTime() - new Date(r.created_at).getTime()) / 1000,
      );
      expect({ day: d.day, opened: d.opened, decided: d.decided }).toEqual({
        day: d.day,
        opened,
        decided: dec.length,
      });
      const m = median(secs);
      if (m == null) expect(d.medianDecisionSeconds).toBeNull();
      else expect(d.medianDecisionSeconds).toBeCloseTo(m, 0);
    }
    const inWindow = (iso: string) => iso >= s.from && iso <= s.to;
    for (const d of s.incidents) {
      expect(d.opened).toBe(inc.filter((r) => utcDay(new Date(r.created_at)) === d.day).length);
    }
    expect(s.incidents.reduce((n: number, d) => n + d.opened, 0)).toBe(3);
    const expected = new Map<string, number>();
    for (const r of cost) {
      const key = `${utcDay(new Date(r.created_at))} ${r.model}`;
      if (inWindow(key.slice(0, 10))) expected.set(key, (expected.get(key) ?? 0) + Number(r.cost_usd ?? 0));
    }
    expect(s.modelCost.map((c) => `${c.day} ${c.model}`).sort()).toEqual([...expected.keys()].sort());
    for (const c of s.modelCost) expect(c.costUsd).toBeCloseTo(expected.get(`${c.day} ${c.model}`)!, 9);
    // the test's own calls were priced: the field is not an empty list of zeros
    expect(s.modelCost.reduce((n: number, c) => n + c.costUsd, 0)).toBeGreaterThan(0);
    expect(s.approvals.reduce((n: number, d) => n + d.decided, 0)).toBe(3);
    const fiveDaysAgo = s.approvals.find((d) => d.day === utcDay(new Date(Date.now() - 5 * 86_400_000)));
    expect(fiveDaysAgo?.medianDecisionSeconds).toBeCloseTo(5400, -1);
  });

  it("shows another project's admin only its own (empty) project", async () => {
    const other = await engine.principal('ADMIN', 'other-admin', { projectId: 'other' });
    const { dailyStats: s } = await engine.ok(other, STATS, { d: 7 });
    expect(s.approvals).toHaveLength(7);
    expect(s.approvals.every((d) => d.opened === 0 && d.decided === 0)).toBe(true);
    expect(s.incidents.every((d) => d.opened === 0)).toBe(true);
    expect(s.modelCost).toEqual([]);
  });
});
