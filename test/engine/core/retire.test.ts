/**
 * Cancellation and suspension retire an instance's work atomically (SPEC §3): late journal, complete,
 * fail, extendLock and credential calls get WORK_RETIRED and change nothing. Resuming reopens the task on
 * the next attempt, and writes the suspended attempt made are reused (`reused: true`, same key), never
 * sent again; a keyless write left in flight becomes OUTCOME_UNKNOWN for a person instead of being re-sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import {
  D,
  GOOD,
  TICKET,
  auditOk,
  events,
  incidentsOf,
  instance,
  startTriage,
  taskOf,
  triageProcess,
} from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'retire', topic: 't-retire' })}`,
  });
  await engine.ok(engine.adminToken, D.setCredential, { n: 'crm-token', s: 'crm-secret-1' });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker', { topics: ['*'] }), 'w-1');
});
afterAll(() => engine?.close());

async function take(): Promise<{ id: string; task: Locked }> {
  const id = await startTriage(engine, 'C-42', 'retire');
  const task = await w.fetchOne({ topic: 't-retire' });
  expect(task.processInstanceId).toBe(id);
  return { id, task };
}

async function expectRetired(task: Locked) {
  const journal = await w.journalRaw(task, 1, {
    kind: 'MODEL_CALL',
    state: 'COMPLETED',
    model: 'gemini-3.6-flash',
    request: { model: 'gemini-3.6-flash', messagesHash: 'h1' },
    response: { content: 'late' },
  });
  expect(codeOf(journal)).toBe('WORK_RETIRED');
  expect(codeOf(await w.completeRaw(task, GOOD))).toBe('WORK_RETIRED');
  expect(codeOf(await w.failRaw(task, 'MODEL_UNAVAILABLE'))).toBe('WORK_RETIRED');
  const extend = await engine.gql(
    w.token,
    `mutation($input: ExtendLockInput!) { extendLock(input: $input) { id } }`,
    {
      input: { taskId: task.id, workerId: 'w-1', lockDurationMs: 10_000 },
    },
  );
  expect(codeOf(extend)).toBe('WORK_RETIRED');
  expect(codeOf(await engine.gql(w.token, D.credential, { t: task.id, s: 'crm', w: 'w-1' }))).toBe(
    'WORK_RETIRED',
  );
  expect(await w.fetch({ topic: 't-retire' })).toEqual([]);
}

describe('retired work', () => {
  it('cancelProcess while leased: every late report is WORK_RETIRED', async () => {
    const { id, task } = await take();
    await w.model(task, 1, 'STARTED');
    const c = await engine.ok(engine.adminToken, D.cancel, { id, r: 'customer withdrew' });
    expect(c.cancelProcess.state).toBe('CANCELLED');
    await expectRetired(task);
    expect(await taskOf(engine, task.id)).toMatchObject({ state: 'CANCELLED', workerId: null });
    expect(await events(engine, id)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'TASK_CANCELLED',
      'INSTANCE_CANCELLED',
    ]);
    expect(codeOf(await engine.gql(engine.adminToken, D.cancel, { id, r: 'again' }))).toBe(
      'VALIDATION_FAILED',
    );
    expect(codeOf(await engine.gql(engine.adminToken, D.resume, { id }))).toBe('VALIDATION_FAILED');
    await auditOk(engine, id);
  });

  it('suspend → WORK_RETIRED; resume → OPEN on the next attempt, earlier writes reused with their key', async () => {
    const { id, task } = await take();
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const started = await w.tool(task, 2, 'crm/create_ticket', 'STARTED', TICKET);
    await w.tool(task, 2, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-9' });
    const closeArgs = { ticketId: 'T-0' };
    const inFlight = await w.tool(task, 3, 'crm/close_ticket', 'STARTED', closeArgs);
    expect((await engine.ok(engine.adminToken, D.suspend, { id })).suspendProcess.state).toBe('SUSPENDED');
    await expectRetired(task);
    expect(codeOf(await engine.gql(engine.adminToken, D.suspend, { id }))).toBe('VALIDATION_FAILED');

    expect((await engine.ok(engine.adminToken, D.resume, { id })).resumeProcess.state).toBe('ACTIVE');
    expect(await taskOf(engine, task.id)).toMatchObject({ state: 'OPEN', attempt: 2 });
    const t2 = await w.fetchOne({ topic: 't-retire' });
    expect(t2).toMatchObject({ id: task.id, attempt: 2, steps: [] });
    expect(t2.earlierWrites.map((s) => [s.attempt, s.sequence, s.toolRef, s.state])).toEqual([
      [1, 2, 'crm/create_ticket', 'COMPLETED'],
      [1, 3, 'crm/close_ticket', 'STARTED'],
    ]);
    // The old attempt's reports stay refused after the resume.
    expect(codeOf(await w.completeRaw(task, GOOD))).not.toBeUndefined();

    await w.model(t2, 1, 'STARTED');
    await w.model(t2, 1, 'COMPLETED');
    const again = await w.tool(t2, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect(again).toMatchObject({ reused: true, idempotencyKey: started.idempotencyKey });
    expect(again.step).toMatchObject({ state: 'COMPLETED', response: { ticketId: 'T-9' } });
    // The keyed write left in flight lends its key: re-sent with it, deduplicated downstream.
    const resent = await w.tool(t2, 3, 'crm/close_ticket', 'STARTED', closeArgs);
    expect(resent).toMatchObject({ reused: false, idempotencyKey: inFlight.idempotencyKey });
    await w.tool(t2, 3, 'crm/close_ticket', 'COMPLETED', closeArgs, { closed: true });
    expect((await w.complete(t2, GOOD)).state).toBe('COMPLETED');

    const h = await events(engine, id);
    expect(h).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'TASK_SUSPENDED',
      'INSTANCE_SUSPENDED',
      'TASK_RESUMED',
      'INSTANCE_RESUMED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    await auditOk(engine, id);
  });

  it('a keyless write in flight at suspension is never re-sent after the resume: OUTCOME_UNKNOWN for a person', async () => {
    const { id, task } = await take();
    const mail = { to: 'alice@example.com', body: 'hello' };
    await w.tool(task, 1, 'crm/send_email', 'STARTED', mail);
    await engine.ok(engine.adminToken, D.suspend, { id });
    await engine.ok(engine.adminToken, D.resume, { id });
    const t = await taskOf(engine, task.id);
    expect(t.state).toBe('FAILED');
    expect(t.steps.find((s) => s.toolRef === 'crm/send_email')!.state).toBe('OUTCOME_UNKNOWN');
    expect(await w.fetch({ topic: 't-retire' })).toEqual([]);
    const [inc] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: task.id });
    expect(inc).toMatchObject({ state: 'OPEN', sequence: 1 });
    await engine.ok(engine.adminToken, D.resolve, {
      input: { id: inc.id, comment: 'not in the outbox', happened: false },
    });
    const t2 = await w.fetchOne({ topic: 't-retire' });
    expect(t2.id).toBe(task.id);
    const unknown = [...t2.steps, ...t2.earlierWrites].find((s) => s.toolRef === 'crm/send_email');
    expect(unknown).toMatchObject({ state: 'OUTCOME_UNKNOWN' });
    await w.complete(t2, GOOD);
    expect((await instance(engine, id)).state).toBe('COMPLETED');
  });

  it('an unknown outcome resolved while the instance is suspended or cancelled does not hand the task out', async () => {
    const mail = { to: 'alice@example.com', body: 'hi' };
    const { id, task } = await take();
    await w.tool(task, 1, 'crm/send_email', 'STARTED', mail);
    expect((await w.failRaw(task, 'WORKER_CRASHED')).data!.failTask).toMatchObject({ state: 'FAILED' });
    await engine.ok(engine.adminToken, D.suspend, { id });
    const [inc] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: task.id });
    await engine.ok(engine.adminToken, D.resolve, {
      input: { id: inc.id, comment: 'it went out', happened: true, result: { messageId: 'M-9' } },
    });
    // Suspended: nobody gets the task until the instance resumes.
    expect(await w.fetch({ topic: 't-retire' })).toEqual([]);
    await engine.ok(engine.adminToken, D.resume, { id });
    const t2 = await w.fetchOne({ topic: 't-retire' });
    expect(t2.id).toBe(task.id);
    // The person's fact answers the same call: it is not sent again.
    const seq = t2.steps.length + 1;
    const again = await w.tool(t2, seq, 'crm/send_email', 'STARTED', mail);
    expect(again).toMatchObject({ reused: true, step: { state: 'COMPLETED' } });
    expect(again.step.response).toMatchObject({ happened: true, result: { messageId: 'M-9' } });
    await w.complete(t2, GOOD);
    expect((await instance(engine, id)).state).toBe('COMPLETED');

    // Cancelled: resolving records the fact, the task stays retired.
    const b = await take();
    await w.tool(b.task, 1, 'crm/send_email', 'STARTED', mail);
    await w.failRaw(b.task, 'WORKER_CRASHED');
    await engine.ok(engine.adminToken, D.cancel, { id: b.id, r: 'duplicate request' });
    const [inc2] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: b.task.id });
    await engine.ok(engine.adminToken, D.resolve, {
      input: { id: inc2.id, comment: 'never sent', happened: false },
    });
    expect(await w.fetch({ topic: 't-retire' })).toEqual([]);
    expect((await taskOf(engine, b.task.id)).state).not.toBe('OPEN');
  });
});
