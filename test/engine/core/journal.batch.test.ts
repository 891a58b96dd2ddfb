/**
 * journalSteps: several steps of one attempt in one request and one transaction, with journalStep's
 * rules applied in order, all or nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { batchOf, modelStep, toolStep } from '../../helpers/steps.js';
import { type Locked, setupSeeds, WorkerSim } from '../../helpers/worker-sim.js';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  w = new WorkerSim(engine, worker);
});
afterAll(() => engine?.close());

const model = modelStep;
const tool = toolStep;
const batch = (t: Locked, steps: unknown[]) => batchOf(engine, w)(t, steps);

async function journalOf(instanceId: string) {
  const inst = (await engine.ok(engine.adminToken, Q.instance, { id: instanceId })).processInstance;
  return inst!.tasks[0].steps.map((s: { sequence: number; state: string }) => `${s.sequence}:${s.state}`);
}

describe('journalSteps', () => {
  it('journals a run of steps in order, with the same answers as one by one', async () => {
    const inst = (
      await engine.ok(engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-42' } })
    ).startProcess;
    const t = await w.fetchOne();
    const r = await batch(t, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'COMPLETED', 'crm/get_customer', { customerId: 'C-42' }),
      tool(3, 'STARTED', 'crm/create_ticket', { customerId: 'C-42', subject: 'Parcel' }),
    ]);
    expect(r.errors).toBeUndefined();
    const results = r.data.journalSteps;
    expect(results.map((x: { step: { state: string } }) => x.step.state)).toEqual([
      'STARTED',
      'COMPLETED',
      'COMPLETED',
      'STARTED',
    ]);
    expect(results[3].idempotencyKey).toMatch(/^abada-/);
    // the same step sent alone afterwards is an identical replay
    const replay = await w.tool(t, 3, 'crm/create_ticket', 'STARTED', {
      customerId: 'C-42',
      subject: 'Parcel',
    });
    expect(replay.idempotencyKey).toBe(results[3].idempotencyKey);
    expect(await journalOf(inst.id)).toEqual(['1:COMPLETED', '2:COMPLETED', '3:STARTED']);
  });

  it('is all or nothing: a refused step rolls the whole batch back and names its index', async () => {
    const inst = (
      await engine.ok(engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-7' } })
    ).startProcess;
    const t = await w.fetchOne();
    const r = await batch(t, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(3, 'COMPLETED', 'crm/get_customer', {}),
    ]);
    expect(codeOf(r)).toBe('SEQUENCE_OUT_OF_ORDER');
    expect(r.errors![0].extensions!.index).toBe(2);
    expect(r.errors![0].message).toMatch(/^Step 2 of the batch: .*Nothing of the batch was journaled\.$/);
    expect(await journalOf(inst.id)).toEqual([]);
    const unbound = await batch(t, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'COMPLETED', 'crm/refund_everything', {}),
    ]);
    expect(codeOf(unbound)).toBe('BINDING_NOT_FROZEN');
    expect(await journalOf(inst.id)).toEqual([]);
  });

  it('ends at a proposal: the task parks, and nothing may follow it in the same batch', async () => {
    await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
    const t = await w.fetchOne();
    const refund = { orderId: '5531', amount: 89, currency: 'EUR' };
    const after = await batch(t, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'PROPOSED', 'crm/refund', refund),
      model(3, 'STARTED'),
    ]);
    expect(codeOf(after)).toBe('LEASE_NOT_HELD');
    expect(after.errors![0].extensions!.index).toBe(3);
    const ok = await batch(t, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'PROPOSED', 'crm/refund', refund),
    ]);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.journalSteps.at(-1).taskState).toBe('AWAITING_APPROVAL');
    // the same batch sent again (its answer was lost) gets the stored answers, and opens nothing new
    const again = await batch(t, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'PROPOSED', 'crm/refund', refund),
    ]);
    expect(again.errors).toBeUndefined();
    expect(again.data.journalSteps.map((x: { step: { state: string } }) => x.step.state)).toEqual([
      'COMPLETED',
      'COMPLETED',
      'PROPOSED',
    ]);
    // a different call is not a re-send: the parked task's lease is not held
    const changed = await batch(t, [
      model(1, 'COMPLETED'),
      tool(2, 'PROPOSED', 'crm/refund', { ...refund, amount: 90 }),
    ]);
    expect(codeOf(changed)).toBe('LEASE_NOT_HELD');
    const approvals = (await engine.ok(engine.adminToken, Q.approvals, { state: 'PENDING' })).approvals;
    expect(approvals.edges.filter((e: { node: { taskId: string } }) => e.node.taskId === t.id)).toHaveLength(
      1,
    );
  });

  it('refuses empty and oversized batches', async () => {
    const t = { id: '00000000-0000-0000-0000-000000000000', attempt: 1 } as Locked;
    expect(codeOf(await batch(t, []))).toBe('VALIDATION_FAILED');
    expect(
      codeOf(
        await batch(
          t,
          Array.from({ length: 51 }, (_, i) => model(i + 1, 'STARTED')),
        ),
      ),
    ).toBe('VALIDATION_FAILED');
  });
});
