/**
 * The lease (SPEC §3, §4 "Poison work"): an expired lease is re-acquired by another worker on the same
 * attempt; a lease that keeps expiring fails the attempt LEASE_EXPIRED (counted against max_attempts,
 * ending FAILED with a TASK_FAILED incident that retryTask clears); a live lease survives an engine
 * restart, and nobody else can fetch the task meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q, json } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import {
  D,
  GOOD,
  auditOk,
  events,
  incidentsOf,
  instance,
  startTriage,
  taskOf,
  triageProcess,
} from './helpers.js';

let engine: TestEngine;
let t1: string;
let t2: string;

beforeAll(async () => {
  engine = await startTestEngine({ env: { ABADA_MAX_LEASE_EXPIRIES: '2' } });
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'poison', topic: 't-poison', maxAttempts: 2 })}---${triageProcess({ key: 'restart', topic: 't-restart' })}`,
  });
  t1 = await engine.principal('WORKER', 'agent-worker-1', { topics: ['*'] });
  t2 = await engine.principal('WORKER', 'agent-worker-2', { topics: ['*'] });
});
afterAll(() => engine?.close());

describe('lease expiry', () => {
  it('hands an expired lease to another worker on the same attempt; poison work fails the attempt, then the task', async () => {
    const w1 = new WorkerSim(engine, t1, 'w-1');
    const w2 = new WorkerSim(engine, t2, 'w-2');
    const id = await startTriage(engine, 'C-1', 'poison');
    const a = await w1.fetchOne({ topic: 't-poison' });
    expect(a.attempt).toBe(1);
    await w1.model(a, 1, 'STARTED');
    await w1.model(a, 1, 'COMPLETED');
    await w1.expireLease(a);
    // Expiry 1: w2 takes it on the same attempt, with the journal.
    const b = await w2.fetchOne({ topic: 't-poison' });
    expect(b).toMatchObject({ id: a.id, attempt: 1 });
    expect(b.steps.map((s) => s.state)).toEqual(['COMPLETED']);
    expect(
      codeOf(
        await w1.journalRaw(a, 2, {
          kind: 'MODEL_CALL',
          state: 'STARTED',
          model: 'gemini-3.6-flash',
          request: { m: 2 },
        }),
      ),
    ).toBe('LEASE_NOT_HELD');
    await w2.expireLease(b);
    // Expiry 2 = ABADA_MAX_LEASE_EXPIRIES: the attempt fails LEASE_EXPIRED instead of looping; attempt 2 opens.
    expect(await w1.fetch({ topic: 't-poison' })).toEqual([]);
    let task = await taskOf(engine, a.id);
    expect(task).toMatchObject({ state: 'OPEN', attempt: 2, workerId: null });
    const c = await w1.fetchOne({ topic: 't-poison', waitMs: 3000 });
    expect(c).toMatchObject({ id: a.id, attempt: 2 });
    expect(c.steps).toEqual([]);
    await w1.expireLease(c);
    const d = await w2.fetchOne({ topic: 't-poison' });
    expect(d).toMatchObject({ id: a.id, attempt: 2 });
    await w2.expireLease(d);
    // Last attempt: FAILED and a TASK_FAILED incident.
    expect(await w1.fetch({ topic: 't-poison' })).toEqual([]);
    task = await taskOf(engine, a.id);
    expect(task).toMatchObject({ state: 'FAILED', attempt: 2 });
    const incs = await incidentsOf(engine, { type: 'TASK_FAILED', taskId: a.id });
    expect(incs).toHaveLength(1);
    expect(incs[0]).toMatchObject({ state: 'OPEN', attempt: 2 });
    expect(await w1.fetch({ topic: 't-poison' })).toEqual([]);

    // Only an admin can retry; it reopens on a fresh attempt and closes the incident.
    expect(codeOf(await engine.gql(t1, D.retry, { id: a.id }))).toBe('FORBIDDEN');
    const retried = await engine.ok(engine.adminToken, D.retry, { id: a.id });
    expect(retried.retryTask).toMatchObject({ state: 'OPEN', attempt: 3 });
    expect((await incidentsOf(engine, { type: 'TASK_FAILED', taskId: a.id }))[0].state).toBe('RESOLVED');
    expect(codeOf(await engine.gql(engine.adminToken, D.retry, { id: a.id }))).toBe('VALIDATION_FAILED');
    const e = await w2.fetchOne({ topic: 't-poison' });
    expect(e).toMatchObject({ id: a.id, attempt: 3 });
    expect((await w2.complete(e, GOOD)).state).toBe('COMPLETED');

    const h = (await instance(engine, id)).history;
    const failed = h.filter((x) => x.eventType === 'ATTEMPT_FAILED' || x.eventType === 'TASK_FAILED');
    expect(failed.map((x) => [x.eventType, x.attempt, json(x.data).errorType, x.actor])).toEqual([
      ['ATTEMPT_FAILED', 1, 'LEASE_EXPIRED', 'engine'],
      ['TASK_FAILED', 2, 'LEASE_EXPIRED', 'engine'],
    ]);
    expect(await events(engine, id)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_LEASE_REACQUIRED',
      'ATTEMPT_FAILED',
      'TASK_LEASED',
      'TASK_LEASE_REACQUIRED',
      'TASK_FAILED',
      'INCIDENT_OPENED',
      'TASK_RETRIED',
      'TASK_LEASED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    await auditOk(engine, id);
  });

  it('keeps a live lease across an engine restart: the same worker continues, nobody else can take it', async () => {
    const id = await startTriage(engine, 'C-2', 'restart');
    const w = new WorkerSim(engine, t1, 'w-1');
    const a = await w.fetchOne({ topic: 't-restart', lockMs: 30_000 });
    await w.model(a, 1, 'STARTED');
    const databaseUrl = engine.databaseUrl;
    await engine.close();
    engine = await startTestEngine({ databaseUrl, env: { ABADA_MAX_LEASE_EXPIRIES: '2' } });

    const again = new WorkerSim(engine, t1, 'w-1');
    const other = new WorkerSim(engine, t2, 'w-2');
    expect(await other.fetch({ topic: 't-restart' })).toEqual([]);
    const task = await taskOf(engine, a.id);
    expect(task).toMatchObject({ state: 'LEASED', workerId: 'w-1', attempt: 1 });
    expect(task.steps.map((s) => `${s.sequence}:${s.state}`)).toEqual(['1:STARTED']);
    await again.model(a, 1, 'COMPLETED');
    await again.tool(a, 2, 'crm/create_ticket', 'STARTED', { subject: 'x' });
    await again.tool(a, 2, 'crm/create_ticket', 'COMPLETED', { subject: 'x' }, { ticketId: 'T-1' });
    expect(await other.fetch({ topic: 't-restart' })).toEqual([]);
    expect((await again.complete(a, GOOD)).state).toBe('COMPLETED');
    expect((await instance(engine, id)).state).toBe('COMPLETED');
    expect(await events(engine, id)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    await auditOk(engine, id);
  });

  it('extendLock: only the holder extends a live lease; an expired lease cannot be revived', async () => {
    const EXTEND = `mutation($input: ExtendLockInput!) { extendLock(input: $input) { id lockExpiresAt } }`;
    const w = new WorkerSim(engine, t1, 'w-1');
    const id = await startTriage(engine, 'C-3', 'restart');
    const a = await w.fetchOne({ topic: 't-restart' });
    expect(a.processInstanceId).toBe(id);
    const ext = await engine.ok(t1, EXTEND, {
      input: { taskId: a.id, workerId: 'w-1', lockDurationMs: 120_000 },
    });
    expect(new Date(ext.extendLock.lockExpiresAt).getTime()).toBeGreaterThan(Date.now() + 100_000);
    expect(
      codeOf(
        await engine.gql(t2, EXTEND, { input: { taskId: a.id, workerId: 'w-1', lockDurationMs: 1000 } }),
      ),
    ).toBe('LEASE_NOT_HELD');
    expect(
      codeOf(
        await engine.gql(t1, EXTEND, {
          input: { taskId: a.id, workerId: 'w-1', lockDurationMs: 1000, attempt: 2 },
        }),
      ),
    ).toBe('ATTEMPT_MISMATCH');
    await w.expireLease(a);
    expect(
      codeOf(
        await engine.gql(t1, EXTEND, { input: { taskId: a.id, workerId: 'w-1', lockDurationMs: 60_000 } }),
      ),
    ).toBe('LEASE_NOT_HELD');
    const b = await new WorkerSim(engine, t2, 'w-2').fetchOne({ topic: 't-restart' });
    expect(b).toMatchObject({ id: a.id, attempt: 1 });
    await new WorkerSim(engine, t2, 'w-2').complete(b, GOOD);
  });

  it('a failed attempt waits retryTimeoutMs before it is handed out again (woken by its due time)', async () => {
    const w = new WorkerSim(engine, t1, 'w-1');
    await startTriage(engine, 'C-4', 'restart');
    const a = await w.fetchOne({ topic: 't-restart' });
    const t0 = Date.now(); // before the failure is stored: available_at is at least t0 + 1200 ms
    expect((await w.failRaw(a, 'MODEL_UNAVAILABLE', 1200)).data!.failTask).toMatchObject({
      state: 'OPEN',
      attempt: 2,
    });
    expect(await w.fetch({ topic: 't-restart' })).toEqual([]);
    const pollMs = 20_000;
    const b = await w.fetchOne({ topic: 't-restart', waitMs: pollMs });
    expect(b).toMatchObject({ id: a.id, attempt: 2 });
    const waited = Date.now() - t0;
    // Not before its due time (timers never fire early; 50 ms for the clocks' granularity), and woken by
    // it rather than by the poll's own timeout: half the timeout tells the two apart on any load.
    expect(waited).toBeGreaterThanOrEqual(1150);
    expect(waited).toBeLessThan(pollMs / 2);
    await w.complete(b, GOOD);
  });
});
