/**
 * seed 002, "What a crash in the middle of the write changes", row by row: the worker dies after sending
 * step 4 (a write), its lease expires, another worker re-acquires the task on the SAME attempt and gets
 * the journal. Finished steps are never redone; a keyed write is re-sent with the same key; a keyless
 * write is never re-sent: OUTCOME_UNKNOWN, a TOOL_OUTCOME_UNKNOWN incident, and a person's fact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import {
  D,
  GOOD,
  TICKET,
  auditOk,
  events,
  incidentsOf,
  instance,
  runToWrite,
  startTriage,
  taskOf,
  triageProcess,
} from './helpers.js';

let engine: TestEngine;
let w1: WorkerSim;
let w2: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'crash-key', topic: 't-key' })}---${triageProcess({ key: 'crash-none', topic: 't-none' })}`,
  });
  w1 = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker-1', { topics: ['*'] }), 'w-1');
  w2 = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker-2', { topics: ['*'] }), 'w-2');
});
afterAll(() => engine?.close());

describe('a crash in the middle of a write (seed 002)', () => {
  it('keyed write: another worker re-acquires the same attempt, replays the journal and re-sends with the same key', async () => {
    const id = await startTriage(engine, 'C-42', 'crash-key');
    const t1 = await w1.fetchOne({ topic: 't-key' });
    const s4 = await runToWrite(w1, t1);
    expect(s4.idempotencyKey).toMatch(/^abada-[0-9a-f]{40}$/);
    // w1 dies here. Nobody else can take the task while the lease is live.
    expect(await w2.fetch({ topic: 't-key' })).toEqual([]);
    await w1.expireLease(t1);

    const t2 = await w2.fetchOne({ topic: 't-key', lockMs: 30_000 });
    expect(t2.id).toBe(t1.id);
    expect(t2.attempt).toBe(1);
    expect(t2.steps.map((s) => `${s.sequence}:${s.kind}:${s.state}`)).toEqual([
      '1:MODEL_CALL:COMPLETED',
      '2:TOOL_CALL:COMPLETED',
      '3:MODEL_CALL:COMPLETED',
      '4:TOOL_CALL:STARTED',
    ]);
    expect(t2.steps[3].idempotencyKey).toBe(s4.idempotencyKey);
    expect(t2.steps[3].request).toEqual({ callId: 'call_4', arguments: TICKET });
    expect(t2.steps[1].response).toEqual({ name: 'Alice', tier: 'gold' });

    const before = (await instance(engine, id)).history.length;
    // Finished steps are answered from the journal, not redone: no model turn is paid for twice.
    const replay1 = await w2.model(t2, 1, 'COMPLETED');
    expect(replay1.step.state).toBe('COMPLETED');
    expect(replay1.step.response).toEqual({ role: 'assistant', content: 'turn 1' });
    const replay4 = await w2.tool(t2, 4, 'crm/create_ticket', 'STARTED', TICKET);
    expect(replay4.idempotencyKey).toBe(s4.idempotencyKey);
    expect((await instance(engine, id)).history.length).toBe(before);

    // The dead worker's late report is refused.
    const late = await w1.journalRaw(t1, 4, {
      kind: 'TOOL_CALL',
      state: 'COMPLETED',
      toolRef: 'crm/create_ticket',
      request: { callId: 'call_4', arguments: TICKET },
      response: { ticketId: 'T-981' },
    });
    expect(codeOf(late)).toBe('LEASE_NOT_HELD');

    // The CRM recognises the key and returns T-981; the new worker finishes the attempt.
    await w2.tool(t2, 4, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-981' });
    await w2.model(t2, 5, 'STARTED');
    await w2.model(t2, 5, 'COMPLETED');
    expect((await w2.complete(t2, GOOD)).state).toBe('COMPLETED');

    const task = await taskOf(engine, t1.id);
    expect(task.steps.filter((s) => s.kind === 'MODEL_CALL')).toHaveLength(3);
    expect(task.steps.every((s) => s.attempt === 1)).toBe(true);
    expect(await events(engine, id)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'TASK_LEASE_REACQUIRED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    const h = (await instance(engine, id)).history;
    const reacq = h.find((e) => e.eventType === 'TASK_LEASE_REACQUIRED');
    expect(reacq).toMatchObject({ actor: 'worker:w-2', attempt: 1 });
    await auditOk(engine, id);
  });

  it('keyless write (idempotency: none): never re-sent; OUTCOME_UNKNOWN, an incident, and a person states the fact', async () => {
    const id = await startTriage(engine, 'C-43', 'crash-none');
    const t1 = await w1.fetchOne({ topic: 't-none' });
    const mail = { to: 'alice@example.com', body: 'We are on it' };
    const s4 = await runToWrite(w1, t1, 'crm/send_email', mail);
    expect(s4.idempotencyKey).toBeNull();
    await w1.expireLease(t1);

    // The re-acquisition settles the in-flight keyless write: the task is not handed out.
    expect(await w2.fetch({ topic: 't-none', waitMs: 0 })).toEqual([]);
    let task = await taskOf(engine, t1.id);
    expect(task).toMatchObject({ state: 'FAILED', attempt: 1, workerId: null });
    expect(task.steps[3]).toMatchObject({ sequence: 4, state: 'OUTCOME_UNKNOWN', toolRef: 'crm/send_email' });
    const [inc] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: t1.id });
    expect(inc).toMatchObject({ state: 'OPEN', attempt: 1, sequence: 4, processInstanceId: id });
    // Still not handed out on a later poll, and an operator retry cannot bypass the person.
    expect(await w2.fetch({ topic: 't-none' })).toEqual([]);
    expect(codeOf(await engine.gql(engine.adminToken, D.retry, { id: t1.id }))).toBe('VALIDATION_FAILED');
    // A worker cannot state the fact; a person must, with a comment and whether it happened.
    expect(
      codeOf(await engine.gql(w2.token, D.resolve, { input: { id: inc.id, comment: 'x', happened: true } })),
    ).toBe('FORBIDDEN');
    expect(
      codeOf(await engine.gql(engine.adminToken, D.resolve, { input: { id: inc.id, comment: 'checked' } })),
    ).toBe('VALIDATION_FAILED');

    const resolved = await engine.ok(engine.adminToken, D.resolve, {
      input: {
        id: inc.id,
        comment: 'the CRM outbox shows it sent',
        happened: true,
        result: { messageId: 'M-7' },
      },
    });
    expect(resolved.resolveIncident).toMatchObject({ state: 'RESOLVED', type: 'TOOL_OUTCOME_UNKNOWN' });
    task = await taskOf(engine, t1.id);
    expect(task).toMatchObject({ state: 'OPEN', attempt: 1 });

    const t2 = await w2.fetchOne({ topic: 't-none' });
    expect(t2).toMatchObject({ id: t1.id, attempt: 1 });
    expect(t2.steps[3]).toMatchObject({ sequence: 4, state: 'OUTCOME_UNKNOWN', idempotencyKey: null });
    expect(t2.steps[3].response).toEqual({
      resolvedByPerson: true,
      happened: true,
      result: { messageId: 'M-7' },
      comment: 'the CRM outbox shows it sent',
    });
    // Re-sending the keyless write is refused: it never runs again.
    expect(
      codeOf(
        await w2.journalRaw(t2, 4, {
          kind: 'TOOL_CALL',
          state: 'COMPLETED',
          toolRef: 'crm/send_email',
          request: { callId: 'call_4', arguments: mail },
          response: {},
        }),
      ),
    ).toBe('DIVERGENT_STEP');
    await w2.model(t2, 5, 'STARTED');
    await w2.model(t2, 5, 'COMPLETED');
    expect((await w2.complete(t2, GOOD)).state).toBe('COMPLETED');

    expect(await events(engine, id)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_OUTCOME_UNKNOWN',
      'INCIDENT_OPENED',
      'TASK_REOPENED',
      'INCIDENT_RESOLVED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    await auditOk(engine, id);
  });
});
