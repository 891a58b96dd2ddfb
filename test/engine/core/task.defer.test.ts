/**
 * Deferral (SPEC §15.3): deferTask hands the lease back on the same attempt without counting toward
 * poison work, the task is not handed out before retryAfterMs (cut to ABADA_MAX_DEFER_MS), the deferral
 * after ABADA_MAX_DEFERRALS on one attempt fails the attempt, and a STARTED write refuses it.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../../server/client/index.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q, json } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { auditOk, instance, runToWrite, startTriage, TICKET, taskOf, triageProcess } from './helpers.js';

const DEFER = graphql(`mutation($input: DeferTaskInput!) {
  deferTask(input: $input) { id state attempt deferrals availableAt errorType errorMessage } }`);

let engine: TestEngine;
let t1: string;
let t2: string;

beforeAll(async () => {
  engine = await startTestEngine({
    env: { ABADA_MAX_LEASE_EXPIRIES: '2', ABADA_MAX_DEFER_MS: '1500' },
  });
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${['poison', 'often', 'write', 'checks'].map((k) => triageProcess({ key: k, topic: `t-${k}` })).join('---')}`,
  });
  t1 = await engine.principal('WORKER', 'defer-worker-1', { topics: ['*'] });
  t2 = await engine.principal('WORKER', 'defer-worker-2', { topics: ['*'] });
});
afterAll(() => engine?.close());

function defer(
  w: WorkerSim,
  task: { id: string; attempt: number },
  retryAfterMs: number,
  reason = 'shutdown',
) {
  return engine.gql(w.token, DEFER, {
    input: { taskId: task.id, workerId: w.workerId, attempt: task.attempt, reason, retryAfterMs },
  });
}

async function leaseExpiries(id: string): Promise<number> {
  const r = await engine.context.db.execute(sql`SELECT lease_expiries FROM external_tasks WHERE id = ${id}`);
  return (r.rows[0] as { lease_expiries: number }).lease_expiries;
}

describe('deferTask', () => {
  it('keeps the attempt and the poison count, and honours retryAfterMs', async () => {
    const w1 = new WorkerSim(engine, t1, 'w-1');
    const w2 = new WorkerSim(engine, t2, 'w-2');
    const id = await startTriage(engine, 'C-1', 'poison');
    const a = await w1.fetchOne({ topic: 't-poison' });
    await w1.model(a, 1, 'STARTED');
    await w1.model(a, 1, 'COMPLETED');
    await w1.expireLease(a);
    const b = await w2.fetchOne({ topic: 't-poison' });
    expect(b).toMatchObject({ id: a.id, attempt: 1 });
    expect(await leaseExpiries(a.id)).toBe(1);

    const t0 = Date.now();
    const deferred = (await defer(w2, b, 800, 'rate limited')).data!.deferTask;
    expect(deferred).toMatchObject({ state: 'OPEN', attempt: 1 });
    expect(await leaseExpiries(a.id)).toBe(1);
    // not before retryAfterMs: an immediate fetch finds nothing; a long poll gets it once it is due
    expect(await w1.fetch({ topic: 't-poison' })).toEqual([]);
    const c = await w1.fetchOne({ topic: 't-poison', waitMs: 5000 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(780);
    expect(c).toMatchObject({ id: a.id, attempt: 1 });
    expect(c.steps.map((s) => s.state)).toEqual(['COMPLETED']); // the journal is kept
    // the poison count was kept: one more expiry is the second (ABADA_MAX_LEASE_EXPIRIES 2)
    await w1.expireLease(c);
    expect(await w2.fetch({ topic: 't-poison' })).toEqual([]);
    expect(await taskOf(engine, a.id)).toMatchObject({ state: 'OPEN', attempt: 2 });

    const h = (await instance(engine, id)).history;
    const d = h.find((x) => x.eventType === 'TASK_DEFERRED')!;
    expect(d).toMatchObject({ actor: 'worker:w-2', attempt: 1, taskId: a.id });
    expect(json(d.data)).toEqual({ reason: 'rate limited', retryAfterMs: 800, deferrals: 1 });
    await auditOk(engine, id);
  });

  it('cuts retryAfterMs to ABADA_MAX_DEFER_MS and refuses a negative one', async () => {
    const w = new WorkerSim(engine, t1, 'w-1');
    const id = await startTriage(engine, 'C-2', 'checks');
    const a = await w.fetchOne({ topic: 't-checks' });
    expect(codeOf(await defer(w, a, -1))).toBe('VALIDATION_FAILED');
    expect(codeOf(await defer(w, a, 0, ' '))).toBe('VALIDATION_FAILED');
    const r = (await defer(w, a, 3_600_000)).data!.deferTask;
    const wait = Date.parse(r.availableAt) - Date.now();
    expect(wait).toBeGreaterThan(500);
    expect(wait).toBeLessThanOrEqual(1600);
    const d = (await instance(engine, id)).history.find((x) => x.eventType === 'TASK_DEFERRED')!;
    expect(json(d.data)).toMatchObject({ retryAfterMs: 1500, requestedMs: 3_600_000 });
  });

  it('answers a stale attempt, another worker and a person as completeTask does', async () => {
    const w1 = new WorkerSim(engine, t1, 'w-1');
    const other = new WorkerSim(engine, t2, 'w-2');
    const sameTokenOtherId = new WorkerSim(engine, t1, 'w-9');
    await startTriage(engine, 'C-3', 'checks');
    const a = await w1.fetchOne({ topic: 't-checks', waitMs: 4000 });
    expect(codeOf(await defer(w1, { id: a.id, attempt: a.attempt + 1 }, 0))).toBe('ATTEMPT_MISMATCH');
    expect(codeOf(await defer(other, a, 0))).toBe('LEASE_NOT_HELD');
    expect(codeOf(await defer(sameTokenOtherId, a, 0))).toBe('LEASE_NOT_HELD');
    const human = await engine.principal('HUMAN', 'defer-human', { groups: ['support'] });
    const r = await engine.gql(human, DEFER, {
      input: { taskId: a.id, workerId: 'w-1', attempt: a.attempt, reason: 'x', retryAfterMs: 0 },
    });
    expect(codeOf(r)).toBe('FORBIDDEN');
    // deferred at once, the task is handed out again at once
    expect((await defer(w1, a, 0)).data!.deferTask.state).toBe('OPEN');
    expect(await other.fetchOne({ topic: 't-checks', waitMs: 0 })).toMatchObject({ id: a.id });
    expect(codeOf(await defer(w1, a, 0))).toBe('LEASE_NOT_HELD');
  });

  it('counts the eleventh deferral on one attempt as a failure of the attempt', async () => {
    const w = new WorkerSim(engine, t1, 'w-1');
    const id = await startTriage(engine, 'C-4', 'often');
    let task = await w.fetchOne({ topic: 't-often' });
    for (let i = 1; i <= 10; i++) {
      expect((await defer(w, task, 0, `busy ${i}`)).data!.deferTask).toMatchObject({
        state: 'OPEN',
        attempt: 1,
        deferrals: i,
      });
      task = await w.fetchOne({ topic: 't-often', waitMs: 0 });
    }
    const eleventh = (await defer(w, task, 0, 'busy 11')).data!.deferTask;
    expect(eleventh).toMatchObject({
      state: 'OPEN',
      attempt: 2,
      deferrals: 0,
      errorType: 'DEFERRED_TOO_OFTEN',
    });
    expect(eleventh.errorMessage).toContain('deferred 11 times on attempt 1 (ABADA_MAX_DEFERRALS is 10)');
    const h = (await instance(engine, id)).history;
    expect(h.filter((x) => x.eventType === 'TASK_DEFERRED')).toHaveLength(10);
    const failed = h.find((x) => x.eventType === 'ATTEMPT_FAILED')!;
    expect(json(failed.data)).toMatchObject({ errorType: 'DEFERRED_TOO_OFTEN', nextAttempt: 2 });
    // a fresh attempt starts with no deferrals counted
    task = await w.fetchOne({ topic: 't-often', waitMs: 4000 });
    expect(task.attempt).toBe(2);
    expect((await defer(w, task, 0)).data!.deferTask).toMatchObject({ state: 'OPEN', attempt: 2 });
    await auditOk(engine, id);
  });

  it('refuses a deferral while a write is STARTED: settle it first', async () => {
    const w = new WorkerSim(engine, t1, 'w-1');
    const id = await startTriage(engine, 'C-5', 'write');
    const a = await w.fetchOne({ topic: 't-write' });
    await runToWrite(w, a);
    const refused = await defer(w, a, 0);
    expect(codeOf(refused)).toBe('VALIDATION_FAILED');
    expect(refused.errors![0].message).toContain('settle it first');
    expect(await taskOf(engine, a.id)).toMatchObject({ state: 'LEASED', workerId: 'w-1' });
    await w.tool(a, 4, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-1' });
    expect((await defer(w, a, 0)).data!.deferTask.state).toBe('OPEN');
    const b = await w.fetchOne({ topic: 't-write', waitMs: 0 });
    expect(b.steps.map((s) => [s.sequence, s.state])).toContainEqual([4, 'COMPLETED']);
    await auditOk(engine, id);
  });
});
