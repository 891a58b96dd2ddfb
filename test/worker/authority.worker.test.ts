/**
 * Authority by the call with real worker processes (SPEC §14, seed 001 §十三): the demo CRM's refund
 * runs with no person at 15 EUR (APPROVAL_AUTO, one refund sent), is refused by policy at 9,000 EUR and
 * by its validation at -5 EUR — and in both the model reads the engine's own words, not "a person did
 * not approve", and nothing reaches the CRM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundScript } from '../../server/demo/scripts.js';
import {
  type Harness,
  instance,
  journalOf,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from './helpers.js';

let h: Harness;
let worker: WorkerProcess;

beforeAll(async () => {
  h = await startHarness({ script: refundScript });
  worker = spawnWorker(h, 'worker-auth');
});
afterAll(async () => {
  worker?.kill('SIGKILL');
  await h?.close();
});

const finished = (id: string) =>
  waitFor(
    `instance ${id} completed`,
    async () => {
      const i = await instance(h, id);
      return i.state === 'COMPLETED' ? i : null;
    },
    30_000,
  );

/** What the model read as the refund's answer: the last tool message of the last model call. */
const lastToolMessage = () =>
  h.model.calls
    .at(-1)!
    .messages.filter((m) => m.role === 'tool')
    .at(-1)!.content;

describe('the demo refund, judged by its rules', () => {
  it('15 EUR runs with no person: APPROVAL_AUTO and exactly one refund sent', async () => {
    h.model.reset();
    const id = await startProcess(h, 'refund', {
      customerId: 'C-42',
      message: 'Please refund 15 EUR of 5531',
    });
    const inst = await finished(id);
    expect(inst.variables.outcome).toMatchObject({ refunded: true, refundId: expect.any(String) });
    expect(h.crm.countCalls('refund')).toBe(1);
    expect(h.crm.sideEffects.filter((s) => s.tool === 'refund').map((s) => s.args)).toEqual([
      { orderId: '5531', amount: 15, currency: 'EUR' },
    ]);
    const events = inst.history.map((e) => e.eventType);
    expect(events).toContain('APPROVAL_AUTO');
    expect(events).not.toContain('APPROVAL_OPENED');
    expect(inst.history.find((e) => e.eventType === 'APPROVAL_AUTO')!.data).toMatchObject({
      rule: { index: 0, when: 'amount <= 20', auto: true },
    });
    // proposed and approved under the same lease, the precondition read again before it runs
    expect(journalOf(inst.tasks[0])).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:COMPLETED',
      '1.3:MODEL_CALL:COMPLETED',
      '1.4:TOOL_CALL:COMPLETED:PRECONDITION',
      '1.5:TOOL_CALL:COMPLETED',
      '1.6:TOOL_CALL:COMPLETED:PRECONDITION',
      '1.7:MODEL_CALL:COMPLETED',
    ]);
  }, 40_000);

  it('9,000 EUR ends with the model reading the policy reason; nothing is sent', async () => {
    h.model.reset();
    const before = h.crm.countCalls('refund');
    const id = await startProcess(h, 'refund', { customerId: 'C-42', message: 'Refund 9000 EUR now' });
    const inst = await finished(id);
    const reason = 'Refused by policy: refunds above 5000 EUR go through the finance desk, not an agent';
    expect(inst.variables.outcome).toEqual({ refunded: false, reason });
    expect(lastToolMessage()).toBe(reason);
    expect(h.crm.countCalls('refund')).toBe(before);
    expect(inst.history.map((e) => e.eventType)).toContain('POLICY_DENIED');
    expect(journalOf(inst.tasks[0])).toContain('1.5:TOOL_CALL:REJECTED');
  }, 40_000);

  it('-5 EUR ends with the model reading the validation message; nothing is sent', async () => {
    h.model.reset();
    const before = h.crm.countCalls('refund');
    const id = await startProcess(h, 'refund', { customerId: 'C-42', message: 'Refund -5 EUR' });
    const inst = await finished(id);
    const reason = 'Invalid arguments: a refund amount must be greater than 0.';
    expect(inst.variables.outcome).toEqual({ refunded: false, reason });
    expect(lastToolMessage()).toBe(reason);
    expect(h.crm.countCalls('refund')).toBe(before);
    expect(inst.history.map((e) => e.eventType)).toContain('ARGUMENTS_INVALID');
  }, 40_000);
});
