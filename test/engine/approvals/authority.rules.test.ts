/**
 * Whether a person is needed depends on the call (SPEC §14.1–2): at PROPOSED the input schema, then
 * `validate`, then `deny`, then the precondition's facts, then `levels` or `auto`; a write's STARTED
 * passes the first three. A refusal is a REJECTED step the model reads, answered again on a re-send;
 * an `auto` match is APPROVED at once by the policy. Nodes may only tighten. Deploy errors all at once.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q, json } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { APPROVAL_FULL, audit, deployShop, preconditionRead, SHOP, started } from './authority.setup.js';
import { historyOf, taskOf, tool, toolRaw } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;
const KEYS = ['r-auto', 'r-one', 'r-two', 'r-deny', 'r-invalid', 'r-schema', 'r-coupon', 'r-moot', 'r-lapse'];
const TIGHT = ['r-tight'];
const order = (amount: unknown) => ({ orderId: '5531', amount, currency: 'EUR' });

beforeAll(async () => {
  engine = await startTestEngine();
  await deployShop(engine, KEYS, TIGHT);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'rw', { topics: [...KEYS, ...TIGHT] }), 'w-r');
  fin = await engine.principal('HUMAN', 'fiona', { groups: ['finance'] });
});
afterAll(() => engine?.close());

const events = async (id: string) => (await historyOf(engine, id)).map((h) => h.eventType);

describe('the rules at PROPOSED: auto below, levels between, deny above', () => {
  it('15 EUR runs with no person: APPROVED at once by the policy, the worker keeps its lease', async () => {
    const { instanceId, task } = await started(w, 'r-auto');
    const p = await tool(w, task, 1, 'shop/refund', 'PROPOSED', order(15));
    expect(p).toMatchObject({ taskState: 'LEASED', step: { state: 'APPROVED' } });
    const a = (await engine.ok(fin, APPROVAL_FULL, { id: p.step.approvalId })).approval;
    expect(a).toMatchObject({
      state: 'APPROVED',
      decidedBy: 'policy',
      version: 1,
      rule: { index: 0, when: 'amount <= 20', auto: true, deny: null, levels: [] },
    });
    expect(a!.validUntil).not.toBeNull();
    const started1 = await tool(w, task, 1, 'shop/refund', 'STARTED', order(15));
    expect(started1.step.state).toBe('STARTED');
    expect(started1.idempotencyKey).toMatch(/^abada-/);
    const h = await historyOf(engine, instanceId);
    const auto = h.find((e) => e.eventType === 'APPROVAL_AUTO')!;
    expect(auto.actor).toBe('policy');
    expect(auto.data).toMatchObject({
      version: 1,
      decision: 'APPROVE',
      digest: p.step.digest,
      rule: { index: 0, when: 'amount <= 20', auto: true },
      definitionVersion: 1,
    });
    expect(h.map((e) => e.eventType).slice(-4)).toEqual([
      'STEP_PROPOSED',
      'APPROVAL_AUTO',
      'STEP_APPROVED',
      'STEP_STARTED',
    ]);
    expect(await audit(engine, instanceId)).toBe(true);
  });

  it('500 EUR waits for finance (the approvers); 1500 EUR for two levels, naming its rule', async () => {
    const one = await started(w, 'r-one');
    const p1 = await tool(w, one.task, 1, 'shop/refund', 'PROPOSED', order(500));
    expect(p1).toMatchObject({ taskState: 'AWAITING_APPROVAL', step: { state: 'PROPOSED' } });
    const a1 = (await engine.ok(fin, APPROVAL_FULL, { id: p1.step.approvalId })).approval;
    expect(a1).toMatchObject({ state: 'PENDING', levels: 1, candidateGroups: ['finance'], rule: null });
    const two = await started(w, 'r-two');
    const p2 = await tool(w, two.task, 1, 'shop/refund', 'PROPOSED', order(1500));
    const a2 = (await engine.ok(fin, APPROVAL_FULL, { id: p2.step.approvalId })).approval;
    expect(a2).toMatchObject({
      levels: 2,
      rule: {
        index: 1,
        when: 'amount > 1000',
        auto: false,
        levels: [{ groups: ['finance'] }, { groups: ['finance-leads'] }],
      },
    });
  });

  it('9000 EUR is refused by policy: REJECTED, no approval, POLICY_DENIED; a re-send gets the same step', async () => {
    const { instanceId, task } = await started(w, 'r-deny');
    const p = await tool(w, task, 1, 'shop/refund', 'PROPOSED', order(9000));
    expect(p).toMatchObject({
      taskState: 'LEASED',
      step: {
        state: 'REJECTED',
        approvalId: null,
        comment: 'Refused by policy: refunds above 5000 EUR go through the finance desk',
      },
    });
    const again = await tool(w, task, 1, 'shop/refund', 'PROPOSED', order(9000));
    expect(again.step).toEqual(p.step);
    const h = await historyOf(engine, instanceId);
    expect(h.map((e) => e.eventType).slice(-2)).toEqual(['POLICY_DENIED', 'STEP_REJECTED']);
    expect(h.find((e) => e.eventType === 'POLICY_DENIED')!.data).toMatchObject({
      toolRef: 'shop/refund',
      rule: { index: 2, deny: 'refunds above 5000 EUR go through the finance desk' },
    });
    const [{ n }] = (
      await engine.context.db.execute<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM approvals WHERE process_instance_id = ${instanceId}`,
      )
    ).rows;
    expect(n).toBe(0);
    // the model goes on: the next step follows the refused one
    expect((await tool(w, task, 2, 'shop/refund', 'PROPOSED', order(400))).step.state).toBe('PROPOSED');
  });

  it('-5 EUR fails validate, a text amount fails input_schema: REJECTED "Invalid arguments:", no values in history', async () => {
    const { instanceId, task } = await started(w, 'r-invalid');
    const p = await tool(w, task, 1, 'shop/refund', 'PROPOSED', order(-5));
    expect(p.step).toMatchObject({
      state: 'REJECTED',
      comment: 'Invalid arguments: the amount must be positive.',
    });
    const h = await historyOf(engine, instanceId);
    const invalid = h.find((e) => e.eventType === 'ARGUMENTS_INVALID')!;
    expect(json(invalid.data).failures).toEqual([{ check: 'validate[0]' }]);
    expect(JSON.stringify(invalid.data)).not.toContain('-5');
    const s = await started(w, 'r-schema');
    const bad = await tool(w, s.task, 1, 'shop/refund', 'PROPOSED', order('lots'));
    expect(bad.step.state).toBe('REJECTED');
    expect(bad.step.comment).toMatch(/^Invalid arguments: amount must be number/);
    const sh = (await historyOf(engine, s.instanceId)).find((e) => e.eventType === 'ARGUMENTS_INVALID')!;
    expect((json(sh.data).failures as unknown[])[0]).toMatchObject({
      check: 'input_schema',
      path: '/amount',
      keyword: 'type',
    });
    expect((await taskOf(engine, task.id)).state).toBe('LEASED');
  });

  it('a precondition read that already fails is not put to a person: "Not proposed:"', async () => {
    const { instanceId, task } = await started(w, 'r-moot');
    const read = await preconditionRead(w, task, 1, '5531', { status: 'REFUNDED' });
    expect(read.errors).toBeUndefined();
    const p = await tool(w, task, 2, 'shop/guarded_refund', 'PROPOSED', order(50));
    expect(p.step).toMatchObject({ state: 'REJECTED', approvalId: null });
    expect(p.step.comment).toBe(`Not proposed: status == 'PAID' (status = "REFUNDED").`);
    expect(await events(instanceId)).toContain('NOT_PROPOSED');
  });
});

describe('a write at STARTED: validate and deny before anything is sent', () => {
  it('an invalid or denied coupon is REJECTED with no key; a re-sent STARTED gets the stored step', async () => {
    const { instanceId, task } = await started(w, 'r-coupon');
    const zero = await tool(w, task, 1, 'shop/coupon', 'STARTED', { percent: 0 });
    expect(zero).toMatchObject({
      idempotencyKey: null,
      step: { state: 'REJECTED', comment: 'Invalid arguments: a coupon is between 1 and 100 percent.' },
    });
    expect((await tool(w, task, 1, 'shop/coupon', 'STARTED', { percent: 0 })).step).toEqual(zero.step);
    const big = await tool(w, task, 2, 'shop/coupon', 'STARTED', { percent: 70 });
    expect(big.step).toMatchObject({
      state: 'REJECTED',
      comment: 'Refused by policy: coupons above 50 percent need a campaign',
    });
    const ok = await tool(w, task, 3, 'shop/coupon', 'STARTED', { percent: 20 });
    expect(ok.step.state).toBe('STARTED');
    expect(ok.idempotencyKey).toMatch(/^abada-/);
    expect(await events(instanceId)).toEqual(expect.arrayContaining(['ARGUMENTS_INVALID', 'POLICY_DENIED']));
    expect(await audit(engine, instanceId)).toBe(true);
  });
});

describe('a node tightens', () => {
  it('drop_auto sends 15 EUR to people; the node deny refuses 150 EUR with its index after the tool rules', async () => {
    const { instanceId, task } = await started(w, 'r-tight');
    const small = await tool(w, task, 1, 'shop/refund', 'PROPOSED', order(15));
    expect(small).toMatchObject({ taskState: 'AWAITING_APPROVAL', step: { state: 'PROPOSED' } });
    const again = await started(w, 'r-tight');
    const denied = await tool(w, again.task, 1, 'shop/refund', 'PROPOSED', order(150));
    expect(denied.step.comment).toBe('Refused by policy: this desk refunds up to 100 EUR');
    const h = await historyOf(engine, again.instanceId);
    expect(json(h.find((e) => e.eventType === 'POLICY_DENIED')?.data).rule).toMatchObject({ index: 3 });
    expect(instanceId).not.toBe(again.instanceId);
  });
});

describe('deploy refuses what the rules cannot mean, all errors at once', () => {
  it('no outcome or two, deny without reason, auto on a write, levels on a node, validate without message', async () => {
    const bad = `
kind: ToolServer
name: bad
transport: streamable-http
url: http://127.0.0.1:4196/mcp
tools:
  look: { policy: read, validate: [{ expect: "x > 0", message: "x" }] }
  pay:
    policy: approval_required
    approvers: [finance]
    approval:
      - { when: "amount > 1" }
      - { when: "amount > 2", levels: [finance], deny: "no" }
      - { when: "amount > 3", deny: "" }
      - { when: "amount > 4", auto: false }
    validate: [{ expect: "amount > 0" }]
  send:
    policy: write
    approval: [{ when: "true", auto: true }]
---
kind: Process
key: bad-node
start: a
nodes:
  - id: a
    type: agent
    model: gemini-3.6-flash
    prompt: p
    tools:
      - { ref: bad/pay, approval: [{ when: "amount > 9", levels: [cfo] }, { when: "amount > 8", auto: true }] }
      - { ref: bad/send, drop_auto: true }
    result_variable: r
    next: done
  - { id: done, type: end }
`;
    const r = await engine.gql(engine.adminToken, Q.deploy, { s: bad });
    const errors = r.errors![0].extensions!.errors as { code: string; path: string }[];
    const codes = errors.map((e) => e.code);
    expect(codes.filter((c) => c === 'ABADA-APL-RULE-001')).toHaveLength(3);
    expect(codes).toContain('ABADA-APL-RULE-002');
    expect(codes.filter((c) => c === 'ABADA-APL-RULE-003')).toHaveLength(2);
    expect(codes.filter((c) => c === 'ABADA-APL-RULE-004')).toHaveLength(2);
    expect(codes).toContain('ABADA-APL-VALIDATE-002');
    expect(errors.some((e) => e.code === 'ABADA-APL-DOC-002' && e.path.includes('validate'))).toBe(true);
    expect(SHOP).toContain('deny');
  });
});

describe('an auto approval past its window', () => {
  it('is approved again by its rule when the call starts: APPROVAL_EXPIRED, then APPROVAL_AUTO', async () => {
    const { instanceId, task } = await started(w, 'r-lapse');
    const p = await tool(w, task, 1, 'shop/refund', 'PROPOSED', order(12));
    await engine.context.db.execute(
      sql`UPDATE approvals SET decided_at = now() - interval '31 minutes' WHERE id = ${p.step.approvalId}`,
    );
    const s = await toolRaw(w, task, 1, 'shop/refund', 'STARTED', order(12));
    expect(s.errors).toBeUndefined();
    expect(s.data!.journalStep.step).toMatchObject({ state: 'STARTED' });
    expect(s.data!.journalStep.step.approvalId).not.toBe(p.step.approvalId);
    const old = (await engine.ok(fin, APPROVAL_FULL, { id: p.step.approvalId })).approval;
    const fresh = (await engine.ok(fin, APPROVAL_FULL, { id: s.data!.journalStep.step.approvalId })).approval;
    expect(old!.state).toBe('EXPIRED');
    expect(fresh).toMatchObject({ state: 'APPROVED', decidedBy: 'policy', version: 2 });
    expect((await events(instanceId)).slice(-4)).toEqual([
      'APPROVAL_EXPIRED',
      'APPROVAL_AUTO',
      'STEP_APPROVED',
      'STEP_STARTED',
    ]);
    expect(await audit(engine, instanceId)).toBe(true);
  });
});
