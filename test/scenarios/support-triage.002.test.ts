/**
 * seeds/002 end to end through GraphQL: the worker takes the task, reads the customer, journals the
 * write before sending it, completes with the result variable; the engine checks the output contract and
 * moves the token to notify_customer, then done. The whole timeline is asserted from history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { json, Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  w = new WorkerSim(engine, worker);
});
afterAll(() => engine?.close());

describe('seed 002: a CRM call and back to the engine', () => {
  it('runs the whole story and records every step in a verifiable history', async () => {
    const started = await engine.ok(engine.adminToken, Q.start, {
      key: 'support-triage',
      v: { customerId: 'C-42', message: 'My parcel never arrived' },
    });
    const instanceId = started.startProcess.id;
    expect(started.startProcess).toMatchObject({ state: 'ACTIVE', currentNodeId: 'triage' });

    const task = await w.fetchOne();
    expect(task.variables).toEqual({ customerId: 'C-42', message: 'My parcel never arrived' });
    expect(task.agentWork?.toolBindings.map((b) => `${b.ref}:${b.policy}`)).toEqual([
      'crm/get_customer:READ',
      'crm/create_ticket:WRITE',
      'crm/send_email:WRITE',
    ]);
    expect(task.agentWork?.prompt).toBe(
      'Read the message from C-42, look the customer up, open a ticket and answer in JSON.',
    );
    expect(task.steps).toEqual([]);

    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const read = await w.tool(
      task,
      2,
      'crm/get_customer',
      'COMPLETED',
      { customerId: 'C-42' },
      { name: 'Alice', tier: 'gold' },
    );
    expect(read.idempotencyKey).toBeNull();
    await w.model(task, 3, 'STARTED');
    await w.model(task, 3, 'COMPLETED');
    const args = { customerId: 'C-42', subject: 'Parcel not received', priority: 'high' };
    const started4 = await w.tool(task, 4, 'crm/create_ticket', 'STARTED', args);
    expect(started4.idempotencyKey).toMatch(/^abada-[0-9a-f]{40}$/);
    const done4 = await w.tool(task, 4, 'crm/create_ticket', 'COMPLETED', args, { ticketId: 'T-981' });
    expect(done4.step.state).toBe('COMPLETED');
    expect(done4.idempotencyKey).toBe(started4.idempotencyKey);
    await w.model(task, 5, 'STARTED');
    const m5 = await w.model(task, 5, 'COMPLETED');
    expect(m5.step.costUsd).toBeCloseTo((1000 * 0.3 + 100 * 2.5) / 1e6, 12);

    const completed = await w.complete(
      task,
      {
        triage: {
          ticketId: 'T-981',
          priority: 'high',
          summary: 'Order 5531 lost, gold customer',
          _confidence: 92,
        },
      },
      { model: 'gemini-3.6-flash', confidence: 92 },
    );
    expect(completed.state).toBe('COMPLETED');

    let inst = (await engine.ok(engine.adminToken, Q.instance, { id: instanceId })).processInstance;
    expect(inst!.currentNodeId).toBe('notify_customer');
    expect(json(inst!.variables).triage).toEqual({
      ticketId: 'T-981',
      priority: 'high',
      summary: 'Order 5531 lost, gold customer',
    });

    const notifyTask = await w.fetchOne({ topic: 'notify' });
    expect(notifyTask.agentWork).toBeNull();
    await w.complete(notifyTask, { notified: true });

    inst = (await engine.ok(engine.adminToken, Q.instance, { id: instanceId })).processInstance;
    expect(inst!.state).toBe('COMPLETED');
    expect(inst!.history.map((h) => h.eventType)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'TASK_CREATED',
      'TASK_LEASED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    const seqs = inst!.history.map((h) => h.seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
    const audit = await engine.ok(
      engine.adminToken,
      `query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows events } }`,
      { id: instanceId },
    );
    // one chained row per commit for the instance, every event verified
    expect(audit.verifyAudit).toEqual({ valid: true, rows: 14, events: 17 });
    // History holds digests and names, never the prompt or the tool payloads.
    const text = JSON.stringify(inst!.history);
    expect(text).not.toContain('look the customer up');
    expect(text).not.toContain('Parcel not received');
  });

  it('refuses anonymous callers and workers where they have no business', async () => {
    expect(codeOf(await engine.gql(null, Q.start, { key: 'support-triage', v: { customerId: 'C-1' } }))).toBe(
      'UNAUTHENTICATED',
    );
    const human = await engine.principal('HUMAN', 'alice-support', { groups: ['support'] });
    expect(
      codeOf(
        await engine.gql(human, Q.fetch, {
          input: { workerId: 'x', maxTasks: 1, topics: [{ topicName: 'abada:agent', lockDurationMs: 1000 }] },
        }),
      ),
    ).toBe('FORBIDDEN');
  });

  it('checks start variables against the declared ones', async () => {
    const r = await engine.gql(engine.adminToken, Q.start, {
      key: 'support-triage',
      v: { message: 3, extra: true },
    });
    expect(codeOf(r)).toBe('VALIDATION_FAILED');
    const paths = (r.errors![0].extensions!.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(['variables.customerId', 'variables.extra', 'variables.message']);
  });
});
