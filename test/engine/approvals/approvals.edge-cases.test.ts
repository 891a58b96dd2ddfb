/**
 * Every edge-case row of seeds/000: a re-sent proposal, the SLA sweep (once across engines), a cancelled
 * instance, a crash during the approved call (keyed and keyless), and a later attempt reproducing the
 * same approved call.
 */
import { json } from '../../helpers/fixtures.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepSla } from '../../../server/engine/approvals/testing.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { parkedPoll } from '../../helpers/wait.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import {
  approvalOf,
  D,
  decide,
  deployPay,
  historyOf,
  startAndPropose,
  taskOf,
  tool,
  toolRaw,
} from './setup.js';
import { STARTED_MS, settle, subscribe } from '../../helpers/ws.js';

let engine: TestEngine;
let w: WorkerSim;
let w2: WorkerSim;
let fin: string;
const ARGS = { orderId: '5531', amount: 89, currency: 'EUR' };

beforeAll(async () => {
  engine = await startTestEngine();
  const topics = [
    'resend',
    'sla',
    'sla2',
    'cancel',
    'suspend',
    'crash',
    'keyless',
    'wake',
    'reuse2',
    'reuse3',
    'reuse',
  ];
  await deployPay(engine, topics);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w1', { topics }), 'w-1');
  w2 = new WorkerSim(engine, await engine.principal('WORKER', 'w2', { topics }), 'w-2');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
});
afterAll(() => engine?.close());

async function approvalCount(taskId: string): Promise<number> {
  const r = await engine.context.db.execute(
    sql`SELECT count(*)::int AS n FROM approvals WHERE task_id = ${taskId}`,
  );
  return (r.rows[0] as { n: number }).n;
}

describe('approval edge cases (seed 000)', () => {
  it('a proposal re-sent after a crash opens no second approval', async () => {
    const p = await startAndPropose(w, 'resend', 'pay/refund', ARGS);
    expect(p.journaled.taskState).toBe('AWAITING_APPROVAL');
    // The worker never read the answer and sends the same proposal again.
    const again = await tool(w, p.task, 1, 'pay/refund', 'PROPOSED', ARGS);
    expect(again).toMatchObject({ taskState: 'AWAITING_APPROVAL', reused: false });
    expect(again.step).toMatchObject({ state: 'PROPOSED', approvalId: p.approvalId, digest: p.digest });
    expect(await approvalCount(p.task.id)).toBe(1);
    // A different proposal for the same sequence is not a re-send: it is refused.
    const other = await toolRaw(w, p.task, 1, 'pay/refund', 'PROPOSED', { ...ARGS, amount: 90 });
    expect(codeOf(other)).toBe('LEASE_NOT_HELD');
    expect(await approvalCount(p.task.id)).toBe(1);
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'APPROVAL_OPENED',
      'STEP_PROPOSED',
    ]);
  });

  it('no decision within the SLA: escalated once, TASK_SLA_BREACHED, an event, candidates unchanged', async () => {
    const p = await startAndPropose(w, 'sla', 'pay/refund', ARGS);
    const watcher = subscribe(
      engine.url,
      fin,
      `subscription { approvalChanged { id state escalated candidateGroups } }`,
    );
    await watcher.connected;
    await settle(STARTED_MS);
    // Not yet due: nothing happens.
    expect(await sweepSla(engine.context)).toBe(0);
    await engine.context.db.execute(
      sql`UPDATE approvals SET sla_due_at = now() - interval '1 minute' WHERE id = ${p.approvalId}`,
    );
    expect(await sweepSla(engine.context)).toBe(1);
    expect(await sweepSla(engine.context)).toBe(0);
    const ev = await watcher.next((d) => d.approvalChanged.id === p.approvalId);
    expect(ev.data.approvalChanged).toEqual({
      id: p.approvalId,
      state: 'PENDING',
      escalated: true,
      candidateGroups: ['finance'],
    });
    await watcher.dispose();
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a).toMatchObject({ state: 'PENDING', escalated: true, candidateGroups: ['finance'] });
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType).slice(-2)).toEqual(['STEP_PROPOSED', 'TASK_SLA_BREACHED']);
    expect(h.at(-1)).toMatchObject({ actor: 'engine', approvalId: p.approvalId, sequence: 1 });
    expect(json(h.at(-1)!.data).candidateGroups).toEqual(['finance']);
    // Escalated is not decided: finance can still approve.
    const ok = await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    expect(ok.data?.decideApproval.state).toBe('APPROVED');
  });

  it('two engines sweeping at once escalate an overdue approval once', async () => {
    const b = await startTestEngine({ databaseUrl: engine.databaseUrl });
    try {
      const ps = [
        await startAndPropose(w, 'sla2', 'pay/refund', ARGS),
        await startAndPropose(w, 'sla2', 'pay/refund', { ...ARGS, orderId: '5532' }),
      ];
      await engine.context.db.execute(
        sql`UPDATE approvals SET sla_due_at = now() - interval '1 second'
            WHERE id IN (${ps[0].approvalId}, ${ps[1].approvalId})`,
      );
      const counts = await Promise.all([
        sweepSla(engine.context),
        sweepSla(b.context),
        sweepSla(engine.context),
        sweepSla(b.context),
      ]);
      expect(counts.reduce((x, y) => x + y, 0)).toBe(2);
      for (const p of ps) {
        const h = await historyOf(engine, p.instanceId);
        expect(h.filter((e) => e.eventType === 'TASK_SLA_BREACHED')).toHaveLength(1);
      }
    } finally {
      await b.close();
    }
  });

  it('cancelled while waiting: the approval is RETIRED, a late decision is WORK_RETIRED, the call never runs', async () => {
    const p = await startAndPropose(w, 'cancel', 'pay/refund', ARGS);
    await engine.ok(engine.adminToken, D.cancel, { id: p.instanceId, r: 'customer withdrew the request' });
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('RETIRED');
    const late = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(codeOf(late)).toBe('WORK_RETIRED');
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.state).toBe('RETIRED');
    expect(a.decisions.map((d) => [d.decidedBy, d.outcome])).toEqual([['fran', 'WORK_RETIRED']]);
    const t = await taskOf(engine, p.task.id);
    expect(t.state).toBe('CANCELLED');
    expect(t.steps.map((s) => s.state)).toEqual(['PROPOSED']);
    expect(await w.fetch({ topic: 'cancel' })).toEqual([]);
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType)).toContain('APPROVAL_RETIRED');
    expect(h.at(-1)).toMatchObject({ eventType: 'APPROVAL_DECISION_REFUSED', approvalId: p.approvalId });
    expect(h.at(-1)!.data).toMatchObject({ code: 'WORK_RETIRED', decision: 'APPROVE' });
  });

  it('suspended while waiting: a late decision is WORK_RETIRED; after resume the call is proposed anew', async () => {
    const p = await startAndPropose(w, 'suspend', 'pay/refund', ARGS);
    await engine.ok(engine.adminToken, `mutation($id: ID!) { suspendProcess(id: $id) { state } }`, {
      id: p.instanceId,
    });
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('RETIRED');
    const late = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(codeOf(late)).toBe('WORK_RETIRED');
    await engine.ok(engine.adminToken, `mutation($id: ID!) { resumeProcess(id: $id) { state } }`, {
      id: p.instanceId,
    });
    const t2 = await w.fetchOne({ topic: 'suspend' });
    expect(t2.attempt).toBe(2);
    const again = await tool(w, t2, 1, 'pay/refund', 'PROPOSED', ARGS);
    expect(again).toMatchObject({ reused: false, taskState: 'AWAITING_APPROVAL' });
    expect(again.step.approvalId).not.toBe(p.approvalId);
    const a2 = await approvalOf(engine, fin, again.step.approvalId!);
    expect(a2.earlierProposals).toEqual([
      expect.objectContaining({ approvalId: p.approvalId, attempt: 1, state: 'RETIRED', changes: [] }),
    ]);
    const ok = await decide(engine, fin, { approvalId: a2.id, decision: 'APPROVE', digest: a2.digest });
    expect(ok.data?.decideApproval.state).toBe('APPROVED');
  });

  it('a worker crashing during the approved call: the next lease re-sends it with the same key', async () => {
    const p = await startAndPropose(w, 'crash', 'pay/refund', ARGS);
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    const t1 = await w.fetchOne({ topic: 'crash' });
    const s1 = await tool(w, t1, 1, 'pay/refund', 'STARTED', ARGS);
    expect(s1.idempotencyKey).toMatch(/^abada-/);
    // w-1 dies mid-call; its lease runs out and w-2 takes the task on the same attempt.
    await w.expireLease(t1);
    const t2 = await w2.fetchOne({ topic: 'crash' });
    expect(t2).toMatchObject({ id: t1.id, attempt: 1 });
    expect(t2.steps[0]).toMatchObject({ state: 'STARTED', idempotencyKey: s1.idempotencyKey });
    const s2 = await tool(w2, t2, 1, 'pay/refund', 'STARTED', ARGS);
    expect(s2.idempotencyKey).toBe(s1.idempotencyKey);
    const done = await tool(w2, t2, 1, 'pay/refund', 'COMPLETED', ARGS, { refunded: true });
    expect(done.step.state).toBe('COMPLETED');
    expect(await approvalCount(p.task.id)).toBe(1);
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType).slice(-3)).toEqual([
      'STEP_STARTED',
      'TASK_LEASE_REACQUIRED',
      'STEP_COMPLETED',
    ]);
  });

  it('idempotency none: an approved call interrupted is never re-sent; OUTCOME_UNKNOWN and an incident', async () => {
    const p = await startAndPropose(w, 'keyless', 'pay/wire', { iban: 'DE00', amount: 89 });
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    const t1 = await w.fetchOne({ topic: 'keyless' });
    const s1 = await tool(w, t1, 1, 'pay/wire', 'STARTED', { iban: 'DE00', amount: 89 });
    expect(s1.step.state).toBe('STARTED');
    expect(s1.idempotencyKey).toBeNull();
    await w.expireLease(t1);
    expect(await w2.fetch({ topic: 'keyless' })).toEqual([]);
    const t = await taskOf(engine, p.task.id);
    expect(t).toMatchObject({ state: 'FAILED', errorType: 'TOOL_OUTCOME_UNKNOWN' });
    expect(t.steps.map((s) => s.state)).toEqual(['OUTCOME_UNKNOWN']);
    const inc = await engine.ok(
      engine.adminToken,
      `query { incidents(state: OPEN) { edges { node { type taskId attempt sequence } } } }`,
    );
    expect(inc.incidents.edges.map((e: { node: unknown }) => e.node)).toContainEqual({
      type: 'TOOL_OUTCOME_UNKNOWN',
      taskId: p.task.id,
      attempt: 1,
      sequence: 1,
    });
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType)).toContain('STEP_OUTCOME_UNKNOWN');
  });

  it('an approval wakes a worker long-polling for the topic', async () => {
    const p = await startAndPropose(w, 'wake', 'pay/refund', ARGS);
    const pollMs = 20_000;
    const polling = await parkedPoll(engine.context.notifier, () =>
      w2.fetch({ topic: 'wake', waitMs: pollMs }),
    );
    const decidedAt = Date.now();
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    const [t] = await polling.result;
    expect(t).toMatchObject({ id: p.task.id, attempt: 1 });
    // Woken by the approval, not by the poll's own timeout (where its last look would find the task too):
    // a woken poll answers within milliseconds; half the timeout tells the two apart on any load.
    expect(Date.now() - decidedAt).toBeLessThan(pollMs / 2);
  });

  it('an approval granted on an attempt that failed before the call is not asked again', async () => {
    const p = await startAndPropose(w, 'reuse2', 'pay/refund', ARGS);
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    const t1 = await w.fetchOne({ topic: 'reuse2' });
    expect((await w.failRaw(t1, 'MODEL_ERROR', 0)).data?.failTask).toMatchObject({ attempt: 2 });
    const t2 = await w.fetchOne({ topic: 'reuse2' });
    const again = await tool(w, t2, 1, 'pay/refund', 'PROPOSED', ARGS);
    expect(again).toMatchObject({ reused: true, taskState: 'LEASED' });
    expect(again.step).toMatchObject({ state: 'APPROVED', approvalId: p.approvalId });
    expect(await approvalCount(p.task.id)).toBe(1);
    const started = await tool(w, t2, 1, 'pay/refund', 'STARTED', ARGS);
    expect(started.idempotencyKey).toMatch(/^abada-/);
    expect(codeOf(await toolRaw(w, t2, 2, 'pay/refund', 'STARTED', ARGS))).toBe('SEQUENCE_OUT_OF_ORDER');
  });

  it('an approved keyed call left STARTED by a failed attempt is re-sent with its key, not re-approved', async () => {
    const p = await startAndPropose(w, 'reuse3', 'pay/refund', ARGS);
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    const t1 = await w.fetchOne({ topic: 'reuse3' });
    const s1 = await tool(w, t1, 1, 'pay/refund', 'STARTED', ARGS);
    expect((await w.failRaw(t1, 'WORKER_CRASH', 0)).data?.failTask).toMatchObject({ attempt: 2 });
    const t2 = await w.fetchOne({ topic: 'reuse3' });
    expect(t2.earlierWrites).toEqual([
      expect.objectContaining({
        attempt: 1,
        sequence: 1,
        state: 'STARTED',
        idempotencyKey: s1.idempotencyKey,
      }),
    ]);
    const again = await tool(w, t2, 1, 'pay/refund', 'PROPOSED', ARGS);
    expect(again).toMatchObject({ taskState: 'LEASED', idempotencyKey: s1.idempotencyKey });
    expect(again.step.state).toBe('STARTED');
    expect(await approvalCount(p.task.id)).toBe(1);
  });

  it('a later attempt reproducing the approved refund is answered from the journal, not approved again', async () => {
    const p = await startAndPropose(w, 'reuse', 'pay/refund', ARGS);
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    const t1 = await w.fetchOne({ topic: 'reuse' });
    const s1 = await tool(w, t1, 1, 'pay/refund', 'STARTED', ARGS);
    await tool(w, t1, 1, 'pay/refund', 'COMPLETED', ARGS, { refundId: 'R-1' });
    const failed = await w.failRaw(t1, 'MODEL_ERROR', 0);
    expect(failed.data?.failTask).toMatchObject({ state: 'OPEN', attempt: 2 });
    const t2 = await w.fetchOne({ topic: 'reuse' });
    expect(t2.attempt).toBe(2);
    expect(t2.earlierWrites).toEqual([
      expect.objectContaining({ attempt: 1, sequence: 1, state: 'COMPLETED', toolRef: 'pay/refund' }),
    ]);
    const again = await tool(w, t2, 1, 'pay/refund', 'PROPOSED', ARGS);
    expect(again).toMatchObject({ reused: true, taskState: 'LEASED', idempotencyKey: s1.idempotencyKey });
    expect(again.step).toMatchObject({ state: 'COMPLETED', reused: true, approvalId: p.approvalId });
    expect(await approvalCount(p.task.id)).toBe(1);
    // A different refund on the later attempt still needs a person.
    const other = await tool(w, t2, 2, 'pay/refund', 'PROPOSED', { ...ARGS, amount: 12 });
    expect(other).toMatchObject({ reused: false, taskState: 'AWAITING_APPROVAL' });
    expect(await approvalCount(p.task.id)).toBe(2);
  });
});
