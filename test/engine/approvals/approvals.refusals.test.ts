/**
 * Who may decide, and what a refused decision leaves behind (SPEC §5): workers and admins never decide,
 * humans only in a candidate group, never on a stale digest, never twice, never on their own instance;
 * a write of an approval_required tool never starts unapproved. Twenty people deciding at once: one wins.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { approvalOf, decide, deployPay, historyOf, startAndPropose, taskOf, toolRaw } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let workerToken: string;
let fin: string;
let fin2: string;
const ARGS = { orderId: '5531', amount: 89, currency: 'EUR' };
const KEYS = ['who', 'stale', 'twice', 'sod', 'unapproved', 'race', 'cancelrace'];

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, KEYS);
  workerToken = await engine.principal('WORKER', 'w-with-groups', { topics: KEYS });
  // A worker row that somehow holds a candidate group must still never decide.
  await engine.context.db.execute(
    sql`UPDATE principals SET groups = ARRAY['finance','finance-leads'] WHERE name = 'w-with-groups'`,
  );
  w = new WorkerSim(engine, workerToken, 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  fin2 = await engine.principal('HUMAN', 'finn', { groups: ['finance'] });
});
afterAll(() => engine?.close());

describe('decideApproval refusals', () => {
  it('FORBIDDEN for a worker (even one holding the group), a human outside the groups, and an admin', async () => {
    const p = await startAndPropose(w, 'who', 'pay/refund', ARGS);
    const input = { approvalId: p.approvalId, decision: 'APPROVE' as const, digest: p.digest };
    expect(codeOf(await decide(engine, workerToken, input))).toBe('FORBIDDEN');
    const support = await engine.principal('HUMAN', 'sam', { groups: ['support'] });
    const outside = await decide(engine, support, input);
    expect(codeOf(outside)).toBe('FORBIDDEN');
    expect(outside.errors![0].message).toContain('finance');
    expect(codeOf(await decide(engine, engine.adminToken, input))).toBe('FORBIDDEN');
    const admin2 = await engine.principal('ADMIN', 'ada');
    expect(codeOf(await decide(engine, admin2, input))).toBe('FORBIDDEN');
    expect(codeOf(await decide(engine, null, input))).toBe('UNAUTHENTICATED');
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.state).toBe('PENDING');
    expect((await taskOf(engine, p.task.id)).state).toBe('AWAITING_APPROVAL');
    expect((await historyOf(engine, p.instanceId)).map((h) => h.eventType)).not.toContain(
      'APPROVAL_APPROVED',
    );
  });

  it('STALE_DIGEST when the digest is not the one of the proposal; recorded, not applied', async () => {
    const p = await startAndPropose(w, 'stale', 'pay/refund', ARGS);
    const stale = 'f'.repeat(64);
    const r = await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: stale });
    expect(codeOf(r)).toBe('STALE_DIGEST');
    expect(r.errors![0].extensions!.digest).toBe(p.digest);
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.state).toBe('PENDING');
    expect(a.decisions).toEqual([
      expect.objectContaining({ decidedBy: 'fran', digest: stale, outcome: 'STALE_DIGEST' }),
    ]);
    const h = await historyOf(engine, p.instanceId);
    expect(h.at(-1)).toMatchObject({ eventType: 'APPROVAL_DECISION_REFUSED', approvalId: p.approvalId });
    expect(h.at(-1)!.data).toMatchObject({ code: 'STALE_DIGEST', digest: stale });
  });

  it('ALREADY_DECIDED for the second decision, which is still recorded', async () => {
    const p = await startAndPropose(w, 'twice', 'pay/refund', ARGS);
    const first = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(first.data?.decideApproval.state).toBe('APPROVED');
    const second = await decide(engine, fin2, {
      approvalId: p.approvalId,
      decision: 'REJECT',
      digest: p.digest,
      comment: 'no',
    });
    expect(codeOf(second)).toBe('ALREADY_DECIDED');
    expect(second.errors![0].message).toContain('fran');
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a).toMatchObject({ state: 'APPROVED', decidedBy: 'fran' });
    expect(a.decisions.map((d) => [d.decidedBy, d.decision, d.outcome])).toEqual([
      ['fran', 'APPROVE', 'ACCEPTED'],
      ['finn', 'REJECT', 'ALREADY_DECIDED'],
    ]);
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType).slice(-3)).toEqual([
      'APPROVAL_APPROVED',
      'STEP_APPROVED',
      'APPROVAL_DECISION_REFUSED',
    ]);
    expect(h.at(-1)!.actor).toMatch(/^human:finn#/);
  });

  it('SEPARATION_OF_DUTIES: the person who started the instance cannot approve its calls', async () => {
    const starter = await engine.principal('HUMAN', 'stella', { groups: ['finance'] });
    const p = await startAndPropose(w, 'sod', 'pay/refund', ARGS, starter);
    const own = await decide(engine, starter, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(codeOf(own)).toBe('SEPARATION_OF_DUTIES');
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('PENDING');
    const other = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(other.data?.decideApproval).toMatchObject({ state: 'APPROVED', decidedBy: 'fran' });
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.decisions.map((d) => [d.decidedBy, d.outcome])).toEqual([
      ['stella', 'SEPARATION_OF_DUTIES'],
      ['fran', 'ACCEPTED'],
    ]);
    const h = await historyOf(engine, p.instanceId);
    expect(h[0]).toMatchObject({ eventType: 'INSTANCE_STARTED' });
    expect(h[0].actor).toMatch(/^human:stella#/);
  });

  it('APPROVAL_REQUIRED: an approval_required write cannot be journaled STARTED without approval', async () => {
    await engine.ok(engine.adminToken, `mutation { startProcess(key: "unapproved") { id } }`);
    const task = await w.fetchOne({ topic: 'unapproved' });
    const r = await toolRaw(w, task, 1, 'pay/refund', 'STARTED', ARGS);
    expect(codeOf(r)).toBe('APPROVAL_REQUIRED');
    const done = await toolRaw(w, task, 1, 'pay/refund', 'COMPLETED', ARGS, { refunded: true });
    expect(codeOf(done)).toBe('APPROVAL_REQUIRED');
    // Nor can a worker approve (or reject) for itself.
    for (const state of ['APPROVED', 'REJECTED']) {
      expect(codeOf(await toolRaw(w, task, 1, 'pay/refund', state, ARGS))).toBe('APPROVAL_REQUIRED');
    }
    const t = await taskOf(engine, task.id);
    expect(t).toMatchObject({ state: 'LEASED', steps: [] });
  });

  it('a decision racing a cancellation: either it lands first or it is WORK_RETIRED, never both', async () => {
    for (let i = 0; i < 4; i++) {
      const p = await startAndPropose(w, 'cancelrace', 'pay/refund', { ...ARGS, orderId: `R-${i}` });
      const [d, c] = await Promise.all([
        decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest }),
        engine.gql(
          engine.adminToken,
          `mutation($id: ID!) { cancelProcess(id: $id, reason: "race") { state } }`,
          {
            id: p.instanceId,
          },
        ),
      ]);
      expect(c.errors).toBeUndefined();
      const a = await approvalOf(engine, fin, p.approvalId);
      const t = await taskOf(engine, p.task.id);
      expect(t.state).toBe('CANCELLED');
      if (codeOf(d) === 'WORK_RETIRED') {
        expect(a.state).toBe('RETIRED');
        expect(t.steps[0].state).toBe('PROPOSED');
      } else {
        expect(d.errors).toBeUndefined();
        expect(a.state).toBe('APPROVED');
        expect(t.steps[0].state).toBe('APPROVED');
      }
      expect(await w.fetch({ topic: 'cancelrace' })).toEqual([]);
    }
  });

  it('twenty people deciding at once: exactly one ACCEPTED, nineteen ALREADY_DECIDED recorded', async () => {
    const p = await startAndPropose(w, 'race', 'pay/refund', ARGS);
    const people = await Promise.all(
      Array.from({ length: 20 }, (_, i) => engine.principal('HUMAN', `racer-${i}`, { groups: ['finance'] })),
    );
    const results = await Promise.all(
      people.map((t) =>
        decide(engine, t, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest }),
      ),
    );
    const codes = results.map((r) => codeOf(r) ?? 'OK');
    expect(codes.filter((c) => c === 'OK')).toHaveLength(1);
    expect(codes.filter((c) => c === 'ALREADY_DECIDED')).toHaveLength(19);
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.state).toBe('APPROVED');
    expect(a.decisions).toHaveLength(20);
    expect(a.decisions.filter((d) => d.outcome === 'ACCEPTED')).toHaveLength(1);
    expect(a.decisions.filter((d) => d.outcome === 'ALREADY_DECIDED')).toHaveLength(19);
    expect(a.decisions.find((d) => d.outcome === 'ACCEPTED')!.decidedBy).toBe(a.decidedBy);
    const h = await historyOf(engine, p.instanceId);
    expect(h.filter((e) => e.eventType === 'APPROVAL_APPROVED')).toHaveLength(1);
    expect(h.filter((e) => e.eventType === 'STEP_APPROVED')).toHaveLength(1);
    expect(h.filter((e) => e.eventType === 'APPROVAL_DECISION_REFUSED')).toHaveLength(19);
    const audit = await engine.ok(
      engine.adminToken,
      `query($id: ID!) { verifyAudit(processInstanceId: $id) { valid } }`,
      { id: p.instanceId },
    );
    expect(audit.verifyAudit.valid).toBe(true);
  });
});
