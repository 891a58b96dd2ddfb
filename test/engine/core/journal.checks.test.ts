/**
 * journalStep's checks (SPEC §4), each refused with its exact code, in the documented order (lease,
 * attempt, sequence, binding, limits), and none of them writing history: sequence gaps and unfinished
 * previous steps, identical replays answered from the journal, divergent replays, unbound tools and
 * models, wrong attempt, wrong worker or expired lease, and payloads over ABADA_MAX_PAYLOAD_BYTES.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { TICKET, instance, startTriage, triageProcess } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;
let intruder: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine({ env: { ABADA_MAX_PAYLOAD_BYTES: '2048' } });
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'checks', topic: 't-checks' })}`,
  });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker-1', { topics: ['*'] }), 'w-1');
  intruder = new WorkerSim(
    engine,
    await engine.principal('WORKER', 'agent-worker-2', { topics: ['*'] }),
    'w-1',
  );
});
afterAll(() => engine?.close());

const model = (m: string, seq: number, state = 'STARTED') => ({
  kind: 'MODEL_CALL',
  state,
  model: m,
  request: { model: m, messagesHash: `h${seq}` },
});
const tool = (ref: string, args: Record<string, unknown>, state = 'STARTED') => ({
  kind: 'TOOL_CALL',
  state,
  toolRef: ref,
  request: { callId: 'c', arguments: args },
});

async function fresh(lockMs = 30_000): Promise<{ id: string; task: Locked }> {
  const id = await startTriage(engine, 'C-42', 'checks');
  const task = await w.fetchOne({ topic: 't-checks', lockMs });
  expect(task.processInstanceId).toBe(id);
  return { id, task };
}

const historyLength = async (id: string) => (await instance(engine, id)).history.length;

describe('journalStep checks', () => {
  it('sequence: no gaps, the previous step must have ended; replay is idempotent; divergence is refused', async () => {
    const { id, task } = await fresh();
    const gap = await w.journalRaw(task, 2, model('gemini-3.6-flash', 2));
    expect(codeOf(gap)).toBe('SEQUENCE_OUT_OF_ORDER');
    expect(gap.errors![0].extensions!.expectedSequence).toBe(1);

    const s1 = await w.journal(task, 1, model('gemini-3.6-flash', 1));
    const open = await w.journalRaw(task, 2, tool('crm/get_customer', { customerId: 'C-42' }, 'COMPLETED'));
    expect(codeOf(open)).toBe('SEQUENCE_OUT_OF_ORDER');
    expect(open.errors![0].extensions!.expectedSequence).toBe(1);

    const n = await historyLength(id);
    const again = await w.journal(task, 1, model('gemini-3.6-flash', 1));
    expect(again.step).toEqual(s1.step);
    expect(await historyLength(id)).toBe(n);

    const divergent = await w.journalRaw(task, 1, model('gemini-3.6-flash', 99));
    expect(codeOf(divergent)).toBe('DIVERGENT_STEP');
    expect(codeOf(await w.journalRaw(task, 1, model('gpt-4.1-mini', 1)))).toBe('DIVERGENT_STEP');
    expect(codeOf(await w.journalRaw(task, 1, tool('crm/get_customer', {}, 'COMPLETED')))).toBe(
      'DIVERGENT_STEP',
    );

    await w.journal(task, 1, { ...model('gemini-3.6-flash', 1, 'COMPLETED'), response: { content: 'ok' } });
    // An ended step does not go back to STARTED nor change its outcome.
    expect(
      codeOf(await w.journalRaw(task, 1, { ...model('gemini-3.6-flash', 1, 'FAILED'), error: 'x' })),
    ).toBe('DIVERGENT_STEP');
    const k = await w.journal(task, 2, tool('crm/create_ticket', TICKET));
    const k2 = await w.journal(task, 2, tool('crm/create_ticket', TICKET));
    expect(k2.idempotencyKey).toBe(k.idempotencyKey);
    // The call id is not part of the digest: a re-send with another call id is the same call.
    const k3 = await w.journal(task, 2, {
      ...tool('crm/create_ticket', TICKET),
      request: { callId: 'other', arguments: TICKET },
    });
    expect(k3.idempotencyKey).toBe(k.idempotencyKey);
    expect(
      codeOf(await w.journalRaw(task, 2, tool('crm/create_ticket', { ...TICKET, priority: 'low' }))),
    ).toBe('DIVERGENT_STEP');
    expect(await historyLength(id)).toBe(n + 2);
  });

  it("bindings: only the frozen tools and the node's models (or fallbacks)", async () => {
    const { id, task } = await fresh();
    const n = await historyLength(id);
    const unbound = await w.journalRaw(task, 1, tool('crm/refund', { amount: 89 }, 'PROPOSED'));
    expect(codeOf(unbound)).toBe('BINDING_NOT_FROZEN');
    expect(codeOf(await w.journalRaw(task, 1, tool('shop/delete_everything', {})))).toBe(
      'BINDING_NOT_FROZEN',
    );
    const badModel = await w.journalRaw(task, 1, model('gpt-4.1', 1));
    expect(codeOf(badModel)).toBe('BINDING_NOT_FROZEN');
    expect(await historyLength(id)).toBe(n);
    // A write is journaled STARTED before it is sent, a model call STARTED before it is called.
    expect(codeOf(await w.journalRaw(task, 1, tool('crm/create_ticket', TICKET, 'COMPLETED')))).toBe(
      'VALIDATION_FAILED',
    );
    expect(codeOf(await w.journalRaw(task, 1, model('gemini-3.6-flash', 1, 'COMPLETED')))).toBe(
      'VALIDATION_FAILED',
    );
    expect(await historyLength(id)).toBe(n);
    // The fallback model is allowed.
    expect((await w.journal(task, 1, model('gpt-4.1-mini', 1))).step.state).toBe('STARTED');
  });

  it('checks run in order: lease, attempt, sequence, binding', async () => {
    const { task } = await fresh();
    // wrong worker and wrong attempt and a gap and an unbound tool → the lease is checked first
    const wrongAll = { id: task.id, attempt: 7 };
    expect(codeOf(await intruder.journalRaw(wrongAll, 9, tool('crm/refund', {})))).toBe('LEASE_NOT_HELD');
    // wrong attempt, a gap and an unbound tool → ATTEMPT_MISMATCH
    const mismatch = await w.journalRaw(wrongAll, 9, tool('crm/refund', {}));
    expect(codeOf(mismatch)).toBe('ATTEMPT_MISMATCH');
    expect(mismatch.errors![0].extensions!.currentAttempt).toBe(1);
    // a gap and an unbound tool → SEQUENCE_OUT_OF_ORDER
    expect(codeOf(await w.journalRaw(task, 9, tool('crm/refund', {})))).toBe('SEQUENCE_OUT_OF_ORDER');
    expect(codeOf(await w.journalRaw(task, 9, model('gpt-4.1', 9)))).toBe('SEQUENCE_OUT_OF_ORDER');
  });

  it('lease: another principal with the same workerId, another workerId, an expired lease → LEASE_NOT_HELD', async () => {
    const { task } = await fresh();
    expect(codeOf(await intruder.journalRaw(task, 1, model('gemini-3.6-flash', 1)))).toBe('LEASE_NOT_HELD');
    const other = new WorkerSim(engine, w.token, 'w-other');
    expect(codeOf(await other.journalRaw(task, 1, model('gemini-3.6-flash', 1)))).toBe('LEASE_NOT_HELD');
    await w.journal(task, 1, model('gemini-3.6-flash', 1));
    await w.expireLease(task);
    const expired = await w.journalRaw(task, 1, {
      ...model('gemini-3.6-flash', 1, 'COMPLETED'),
      response: {},
    });
    expect(codeOf(expired)).toBe('LEASE_NOT_HELD');
    expect(expired.errors![0].message).toMatch(/expired/);
    // A human or admin never journals.
    expect(
      codeOf(
        await engine.gql(engine.adminToken, Q.journal, {
          input: {
            taskId: task.id,
            workerId: 'w-1',
            attempt: 1,
            sequence: 1,
            ...model('gemini-3.6-flash', 1),
          },
        }),
      ),
    ).toBe('FORBIDDEN');
    // The expired task is re-acquired so it does not linger for other tests of this file.
    const again = await w.fetchOne({ topic: 't-checks' });
    expect(again).toMatchObject({ id: task.id, attempt: 1 });
  });

  it('payload over ABADA_MAX_PAYLOAD_BYTES → PAYLOAD_TOO_LARGE, nothing stored', async () => {
    const { id, task } = await fresh();
    const n = await historyLength(id);
    const big = await w.journalRaw(task, 1, tool('crm/get_customer', { customerId: 'C-42' }, 'COMPLETED'));
    expect(big.errors).toBeUndefined();
    const r = await w.journalRaw(task, 2, {
      ...tool('crm/get_customer', { customerId: 'C-42' }, 'COMPLETED'),
      response: { blob: 'x'.repeat(3000) },
    });
    expect(codeOf(r)).toBe('PAYLOAD_TOO_LARGE');
    expect(r.errors![0].extensions!.limitBytes).toBe(2048);
    expect(await historyLength(id)).toBe(n + 1);
    // Still at sequence 2: the refused step was not stored.
    expect(
      (
        await w.journal(task, 2, {
          ...tool('crm/get_customer', { customerId: 'C-42' }, 'COMPLETED'),
          response: { ok: 1 },
        })
      ).step.sequence,
    ).toBe(2);
  });
});
