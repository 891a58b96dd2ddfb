/**
 * Revoking an approval (SPEC §11, seed 001 §五): an approval is withdrawn by a person who decided it, or
 * an admin, until its call starts. The step becomes REJECTED with the reason (the model reads it), the
 * approval REVOKED, the task is handed out again on the same attempt, and a worker that had already
 * taken the approved call loses its lease. After STARTED: ALREADY_EXECUTING.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { approvalOf, decide, deployPay, historyOf, startAndPropose, taskOf, toolRaw } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;
let fin2: string;
const ARGS = { orderId: '5531', amount: 89, currency: 'EUR' };
const KEYS = ['rv-open', 'rv-taken', 'rv-started', 'rv-pending', 'rv-who'];
const REVOKE = `mutation($input: RevokeApprovalInput!) { revokeApproval(input: $input) { id state comment } }`;

const revoke = (token: string | null, approvalId: string, comment = 'the order was refunded by hand') =>
  engine.gql(token, REVOKE, { input: { approvalId, comment } });

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, KEYS);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'rv-worker', { topics: KEYS }), 'w-rv');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  fin2 = await engine.principal('HUMAN', 'finn', { groups: ['finance'] });
});
afterAll(() => engine?.close());

async function approved(key: string) {
  const p = await startAndPropose(w, key, 'pay/refund', ARGS);
  const r = await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
  expect(r.errors).toBeUndefined();
  return p;
}

describe('revokeApproval', () => {
  it('approved, not yet taken: REVOKED, the step REJECTED with the reason, the next lease reads it', async () => {
    const p = await approved('rv-open');
    const r = await revoke(fin, p.approvalId);
    expect(r.errors).toBeUndefined();
    expect(r.data!.revokeApproval).toMatchObject({
      state: 'REVOKED',
      comment: 'the order was refunded by hand',
    });
    const task = await taskOf(engine, p.task.id);
    expect(task.state).toBe('OPEN');
    expect(task.steps[0]).toMatchObject({
      state: 'REJECTED',
      comment: 'Approval revoked by fran: the order was refunded by hand',
    });
    // the worker that takes the task again finds the rejection, never an approved call
    const again = await w.fetchOne({ topic: 'rv-open' });
    expect(again.attempt).toBe(p.task.attempt);
    expect(again.steps.map((s) => s.state)).toEqual(['REJECTED']);
    expect(codeOf(await toolRaw(w, again, 1, 'pay/refund', 'STARTED', ARGS))).toBe('APPROVAL_REQUIRED');
    const events = (await historyOf(engine, p.instanceId)).map((h) => h.eventType);
    expect(events.slice(-4)).toEqual(['STEP_APPROVED', 'APPROVAL_REVOKED', 'STEP_REJECTED', 'TASK_LEASED']);
    // a second revoke: already settled
    expect(codeOf(await revoke(fin, p.approvalId))).toBe('ALREADY_DECIDED');
  });

  it('approved and taken by a worker that has not started the call: the worker loses its lease', async () => {
    const p = await approved('rv-taken');
    const taken = await w.fetchOne({ topic: 'rv-taken' });
    expect(taken.steps.map((s) => s.state)).toEqual(['APPROVED']);
    expect((await revoke(engine.adminToken, p.approvalId)).errors).toBeUndefined();
    expect(codeOf(await toolRaw(w, taken, 1, 'pay/refund', 'STARTED', ARGS))).toBe('LEASE_NOT_HELD');
    expect((await taskOf(engine, p.task.id)).state).toBe('OPEN');
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('REVOKED');
  });

  it('after STARTED: ALREADY_EXECUTING, and nothing changes', async () => {
    const p = await approved('rv-started');
    const taken = await w.fetchOne({ topic: 'rv-started' });
    const started = await toolRaw(w, taken, 1, 'pay/refund', 'STARTED', ARGS);
    expect(started.errors).toBeUndefined();
    const r = await revoke(fin, p.approvalId);
    expect(codeOf(r)).toBe('ALREADY_EXECUTING');
    expect(r.errors![0].message).toContain('STARTED');
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('APPROVED');
    expect((await taskOf(engine, p.task.id)).steps[0].state).toBe('STARTED');
  });

  it('pending: an admin withdraws it and the task is handed out again', async () => {
    const p = await startAndPropose(w, 'rv-pending', 'pay/refund', ARGS);
    const r = await revoke(engine.adminToken, p.approvalId, 'duplicate request');
    expect(r.data!.revokeApproval.state).toBe('REVOKED');
    const task = await taskOf(engine, p.task.id);
    expect(task.state).toBe('OPEN');
    expect(task.steps[0].comment).toBe('Withdrawn by bootstrap-admin: duplicate request');
  });

  it('only a person who decided it, or an admin; a comment is required; workers never', async () => {
    const p = await approved('rv-who');
    expect(codeOf(await revoke(fin2, p.approvalId))).toBe('FORBIDDEN');
    expect(codeOf(await revoke(w.token, p.approvalId))).toBe('FORBIDDEN');
    expect(codeOf(await revoke(null, p.approvalId))).toBe('UNAUTHENTICATED');
    expect(codeOf(await revoke(fin, p.approvalId, '  '))).toBe('COMMENT_REQUIRED');
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('APPROVED');
  });
});
