/**
 * Every level decides the version that runs (SPEC §14.3–6, seed 001: version 1's confirmation never
 * authorises version 2). An approver's edit is version v+1, judged by the rules again; the editor counts
 * for the lowest level of v+1 naming their groups, every other level decides v+1 afresh. Time is
 * checked when a person acts; every refused attempt and every accepted decision is evidence in the chain.
 */
import { json } from '../../helpers/fixtures.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallDigest } from '../../../server/shared/canonical.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { APPROVAL_FULL, audit, deployShop, started } from './authority.setup.js';
import { decide, historyOf, taskOf, tool, toolRaw } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let workerToken: string;
let fran: string;
let finn: string;
let lee: string;
let bo: string;
let sam: string;
const KEYS = [
  'v-l2',
  'v-cross',
  'v-bo',
  'v-deny',
  'v-inv',
  'v-auto',
  'v-authority',
  'v-time',
  'v-revoke',
  'v-who',
];
const order = (amount: unknown) => ({ orderId: '5531', amount, currency: 'EUR' });

beforeAll(async () => {
  engine = await startTestEngine();
  await deployShop(engine, KEYS);
  workerToken = await engine.principal('WORKER', 'vw', { topics: KEYS });
  w = new WorkerSim(engine, workerToken, 'w-v');
  fran = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  finn = await engine.principal('HUMAN', 'finn', { groups: ['finance'] });
  lee = await engine.principal('HUMAN', 'lee', { groups: ['finance-leads'] });
  bo = await engine.principal('HUMAN', 'bo', { groups: ['finance', 'finance-leads'] });
  sam = await engine.principal('HUMAN', 'sam', { groups: ['support'] });
});
afterAll(() => engine?.close());

async function proposed(key: string, amount: number, starter?: string) {
  const s = await started(w, key, starter);
  const p = await tool(w, s.task, 1, 'shop/refund', 'PROPOSED', order(amount));
  return { ...s, approvalId: p.step.approvalId!, digest: p.step.digest };
}
const approvalOf = async (id: string) => {
  const { approval } = await engine.ok(engine.adminToken, APPROVAL_FULL, { id });
  if (!approval) throw new Error(`no approval ${id}`);
  return approval;
};
const approve = (token: string, approvalId: string, digest: string, args?: unknown) =>
  decide(engine, token, { approvalId, decision: 'APPROVE', digest, ...(args ? { arguments: args } : {}) });

describe('an edit is a new version every level decides', () => {
  it('a level-2 edit on a two-level approval needs level 1 again on the new digest', async () => {
    const p = await proposed('v-l2', 1500);
    expect((await approve(fran, p.approvalId, p.digest)).errors).toBeUndefined();
    const edited = order(1800);
    const v2 = toolCallDigest('shop/refund', edited);
    const r = await approve(lee, p.approvalId, p.digest, edited);
    expect(r.data!.decideApproval).toMatchObject({
      state: 'PENDING',
      level: 1,
      candidateGroups: ['finance'],
      digest: v2,
    });
    // fran's approval of version 1 does not count for version 2: fran (level 1 of v1) decides level 1 of v2
    expect(codeOf(await approve(fran, p.approvalId, p.digest))).toBe('STALE_DIGEST');
    const done = await approve(fran, p.approvalId, v2);
    expect(done.data!.decideApproval).toMatchObject({ state: 'APPROVED', decidedBy: 'fran', digest: v2 });
    const a = await approvalOf(p.approvalId);
    expect(
      a!.decisions.map((d) => [d.version, d.level, d.decidedBy, d.outcome, d.editedDigest === v2]),
    ).toEqual([
      [1, 1, 'fran', 'ACCEPTED', false],
      [2, 2, 'lee', 'ACCEPTED', true],
      // a refused attempt is recorded on the version the approval was at
      [2, 1, 'fran', 'STALE_DIGEST', false],
      [2, 1, 'fran', 'ACCEPTED', false],
    ]);
    expect(a.versions).toEqual([
      expect.objectContaining({ version: 1, digest: p.digest, editedBy: null, arguments: order(1500) }),
      expect.objectContaining({
        version: 2,
        digest: v2,
        editedBy: 'lee',
        changes: [{ path: 'amount', before: 1500, after: 1800 }],
      }),
    ]);
    const h = await historyOf(engine, p.instanceId);
    const edit = h.find((e) => e.eventType === 'APPROVAL_LEVEL_APPROVED' && json(e.data).version === 2)!;
    expect(edit.data).toMatchObject({
      level: 2,
      of: 2,
      decision: 'APPROVE',
      digest: v2,
      decidedOn: p.digest,
      editedFrom: { version: 1, digest: p.digest },
      groups: ['finance-leads'],
      rule: { index: 1, when: 'amount > 1000' },
      definitionVersion: 1,
    });
    expect(h.find((e) => e.eventType === 'APPROVAL_APPROVED')!.data).toMatchObject({ version: 2, level: 1 });
    // the call runs on version 2 only
    const t = await w.fetchOne({ topic: 'v-l2' });
    expect(codeOf(await toolRaw(w, t, 1, 'shop/refund', 'STARTED', order(1500)))).toBe('DIVERGENT_STEP');
    expect((await tool(w, t, 1, 'shop/refund', 'STARTED', edited)).step.state).toBe('STARTED');
    expect(await audit(engine, p.instanceId)).toBe(true);
  });

  it('an edit crossing a rule threshold gains the level; an edit to the auto range still goes to people', async () => {
    const p = await proposed('v-cross', 500);
    const big = order(1500);
    const r = await approve(fran, p.approvalId, p.digest, big);
    expect(r.data!.decideApproval).toMatchObject({
      state: 'PENDING',
      level: 2,
      levels: 2,
      candidateGroups: ['finance-leads'],
    });
    expect((await approvalOf(p.approvalId)).rule).toMatchObject({ index: 1 });
    const v2 = toolCallDigest('shop/refund', big);
    const small = order(15);
    // lee edits version 2 down into the auto range: a person changed it, so persons decide it
    const r3 = await approve(lee, p.approvalId, v2, small);
    expect(r3.data!.decideApproval).toMatchObject({
      state: 'PENDING',
      level: 1,
      levels: 1,
      candidateGroups: ['finance'],
    });
    const v3 = toolCallDigest('shop/refund', small);
    const done = await approve(finn, p.approvalId, v3);
    expect(done.data!.decideApproval).toMatchObject({ state: 'APPROVED', decidedBy: 'finn' });
    const a = await approvalOf(p.approvalId);
    expect(a.version).toBe(3);
    // lee's decision on v3 counted for no level (v3 names only finance): it only made the version
    expect(a!.decisions.map((d) => [d.version, d.level, d.decidedBy])).toEqual([
      [2, 1, 'fran'],
      [3, null, 'lee'],
      [3, 1, 'finn'],
    ]);
    expect((await historyOf(engine, p.instanceId)).map((e) => e.eventType)).toContain('APPROVAL_EDITED');
  });

  it('the editor never decides a second level of the version they made', async () => {
    const p = await proposed('v-bo', 500);
    const big = order(2000);
    const r = await approve(bo, p.approvalId, p.digest, big);
    expect(r.data!.decideApproval).toMatchObject({ state: 'PENDING', level: 2 });
    const v2 = toolCallDigest('shop/refund', big);
    expect(codeOf(await approve(bo, p.approvalId, v2))).toBe('SEPARATION_OF_DUTIES');
    expect((await approve(lee, p.approvalId, v2)).data!.decideApproval.state).toBe('APPROVED');
  });

  it('an edit a deny rule matches is POLICY_DENIED; an invalid one INVALID_ARGUMENTS; both recorded, nothing applied', async () => {
    const p = await proposed('v-deny', 500);
    const denied = await approve(fran, p.approvalId, p.digest, order(9000));
    expect(codeOf(denied)).toBe('POLICY_DENIED');
    expect(denied.errors![0].message).toContain('refunds above 5000 EUR go through the finance desk');
    const invalid = await approve(fran, p.approvalId, p.digest, order(-3));
    expect(codeOf(invalid)).toBe('INVALID_ARGUMENTS');
    expect(invalid.errors![0].extensions!.failures).toEqual([
      { check: 'validate[0]', message: 'the amount must be positive' },
    ]);
    const schema = await approve(fran, p.approvalId, p.digest, { orderId: 5531, amount: 10 });
    expect(codeOf(schema)).toBe('INVALID_ARGUMENTS');
    const a = await approvalOf(p.approvalId);
    expect(a).toMatchObject({ state: 'PENDING', version: 1, digest: p.digest });
    expect(a!.decisions.map((d) => d.outcome)).toEqual([
      'POLICY_DENIED',
      'INVALID_ARGUMENTS',
      'INVALID_ARGUMENTS',
    ]);
    const refused = (await historyOf(engine, p.instanceId)).filter(
      (e) => e.eventType === 'APPROVAL_DECISION_REFUSED',
    );
    // one row per actor, approval and code a minute: the second INVALID_ARGUMENTS is counted, not chained
    expect(refused.map((e) => json(e.data).code)).toEqual(['POLICY_DENIED', 'INVALID_ARGUMENTS']);
    expect((await approve(fran, p.approvalId, p.digest)).data!.decideApproval.state).toBe('APPROVED');
  });

  it('the authority re-check at STARTED counts only the deciders of the version that runs', async () => {
    const p = await proposed('v-authority', 1500);
    const temp = await engine.principal('HUMAN', 'tess', { groups: ['finance'] });
    expect((await approve(temp, p.approvalId, p.digest)).errors).toBeUndefined();
    const edited = order(1200);
    const v2 = toolCallDigest('shop/refund', edited);
    expect((await approve(lee, p.approvalId, p.digest, edited)).errors).toBeUndefined();
    expect((await approve(finn, p.approvalId, v2)).data!.decideApproval.state).toBe('APPROVED');
    // tess decided version 1 only: her leaving finance does not touch version 2's authority
    await engine.context.db.execute(sql`UPDATE principals SET groups = ARRAY['support'] WHERE name = 'tess'`);
    const t = await w.fetchOne({ topic: 'v-authority' });
    expect((await tool(w, t, 1, 'shop/refund', 'STARTED', edited)).step.state).toBe('STARTED');
  });
});

describe('time is checked when a person acts', () => {
  it('a decision 1 s past expiresAt, no sweep: APPROVAL_EXPIRED, the approval EXPIRED in the same commit', async () => {
    const p = await proposed('v-time', 300);
    await engine.context.db.execute(
      sql`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = ${p.approvalId}`,
    );
    const r = await approve(fran, p.approvalId, p.digest);
    expect(codeOf(r)).toBe('APPROVAL_EXPIRED');
    const a = await approvalOf(p.approvalId);
    expect(a.state).toBe('EXPIRED');
    expect(a!.decisions.map((d) => d.outcome)).toEqual(['APPROVAL_EXPIRED']);
    const task = await taskOf(engine, p.task.id);
    expect(task.state).toBe('OPEN');
    expect(task.steps[0]).toMatchObject({ state: 'REJECTED' });
    expect(task.steps[0].comment).toMatch(/^Rejected: no decision before /);
    const h = (await historyOf(engine, p.instanceId)).map((e) => e.eventType);
    expect(h.slice(-3)).toEqual(['APPROVAL_EXPIRED', 'STEP_REJECTED', 'APPROVAL_DECISION_REFUSED']);
    expect(await audit(engine, p.instanceId)).toBe(true);
  });

  it('a revoke after validUntil expires the approval, opens the next version and is refused APPROVAL_EXPIRED', async () => {
    const p = await proposed('v-revoke', 300);
    expect((await approve(fran, p.approvalId, p.digest)).errors).toBeUndefined();
    await engine.context.db.execute(
      sql`UPDATE approvals SET decided_at = now() - interval '31 minutes' WHERE id = ${p.approvalId}`,
    );
    const r = await engine.gql(
      fran,
      'mutation($a: ID!) { revokeApproval(input: {approvalId: $a, comment: "stop"}) { id } }',
      {
        a: p.approvalId,
      },
    );
    expect(codeOf(r)).toBe('APPROVAL_EXPIRED');
    expect((await approvalOf(p.approvalId)).state).toBe('EXPIRED');
    const task = await taskOf(engine, p.task.id);
    expect(task.state).toBe('AWAITING_APPROVAL');
    expect(task.steps[0].state).toBe('PROPOSED');
    const next = await approvalOf(task.steps[0].approvalId!);
    expect(next).toMatchObject({ state: 'PENDING', version: 2, digest: p.digest });
    expect(await audit(engine, p.instanceId)).toBe(true);
  });
});

describe('refused attempts are evidence', () => {
  it('an outsider, a worker and the instance starter each leave one APPROVAL_DECISION_REFUSED row', async () => {
    const starter = await engine.principal('ADMIN', 'starter-admin');
    const p = await proposed('v-who', 300, starter);
    // the starter as a person of finance: a human principal who started it
    const human = await engine.principal('HUMAN', 'hugo', { groups: ['finance'] });
    await engine.context.db.execute(
      sql`UPDATE process_instances SET started_by = (SELECT id FROM principals WHERE name = 'hugo') WHERE id = ${p.instanceId}`,
    );
    expect(codeOf(await approve(sam, p.approvalId, p.digest))).toBe('FORBIDDEN');
    expect(codeOf(await approve(workerToken, p.approvalId, p.digest))).toBe('FORBIDDEN');
    expect(codeOf(await approve(human, p.approvalId, p.digest))).toBe('SEPARATION_OF_DUTIES');
    // sam again within the minute: kept, counted on sam's next chained row
    expect(codeOf(await approve(sam, p.approvalId, p.digest))).toBe('FORBIDDEN');
    let refused = (await historyOf(engine, p.instanceId)).filter(
      (e) => e.eventType === 'APPROVAL_DECISION_REFUSED',
    );
    expect(refused.map((e) => [e.actor.split('#')[0], json(e.data).code])).toEqual([
      ['human:sam', 'FORBIDDEN'],
      ['worker:vw', 'FORBIDDEN'],
      ['human:hugo', 'SEPARATION_OF_DUTIES'],
    ]);
    await engine.context.db.execute(
      sql`UPDATE approval_decisions SET created_at = created_at - interval '2 minutes' WHERE approval_id = ${p.approvalId}`,
    );
    expect(codeOf(await approve(sam, p.approvalId, p.digest))).toBe('FORBIDDEN');
    refused = (await historyOf(engine, p.instanceId)).filter(
      (e) => e.eventType === 'APPROVAL_DECISION_REFUSED',
    );
    expect(refused.at(-1)!.data).toMatchObject({ code: 'FORBIDDEN', suppressed: 1, version: 1, level: 1 });
    expect((await approvalOf(p.approvalId)).decisions).toHaveLength(5);
    expect(await audit(engine, p.instanceId)).toBe(true);
  });
});
