/**
 * Reuse across attempts (SPEC §4 "Later attempts"): a write an earlier attempt completed is answered
 * from the journal (`reused: true`, its response and key), not sent again; a keyed write an earlier
 * attempt left STARTED lends its key to the re-send; different arguments are a new call with a new key;
 * each earlier write is reused at most once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import {
  GOOD,
  TICKET,
  auditOk,
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
    s: `${CRM_SERVER()}---${triageProcess({ key: 'reuse', topic: 't-reuse' })}`,
  });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker', { topics: ['*'] }), 'w-1');
});
afterAll(() => engine?.close());

describe('reuse across attempts', () => {
  it('a completed write is reused, a keyed write left STARTED lends its key, new arguments get a new key', async () => {
    const id = await startTriage(engine, 'C-42', 'reuse');
    const t1 = await w.fetchOne({ topic: 't-reuse' });
    const created = await w.tool(t1, 1, 'crm/create_ticket', 'STARTED', TICKET);
    await w.tool(t1, 1, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-981' });
    const closing = await w.tool(t1, 2, 'crm/close_ticket', 'STARTED', { ticketId: 'T-981' });
    // The worker gives up with the close in flight (a keyed write: safe to re-send with its key).
    const failed = await w.failRaw(t1, 'MODEL_UNAVAILABLE');
    expect(failed.data!.failTask).toMatchObject({ state: 'OPEN', attempt: 2 });
    expect(await incidentsOf(engine, { taskId: t1.id })).toEqual([]);

    const t2 = await w.fetchOne({ topic: 't-reuse' });
    expect(t2).toMatchObject({ id: t1.id, attempt: 2, steps: [] });
    expect(t2.earlierWrites.map((s) => [s.attempt, s.sequence, s.state, s.idempotencyKey])).toEqual([
      [1, 1, 'COMPLETED', created.idempotencyKey],
      [1, 2, 'STARTED', closing.idempotencyKey],
    ]);
    await w.model(t2, 1, 'STARTED');
    await w.model(t2, 1, 'COMPLETED');
    const r = await w.tool(t2, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect(r).toMatchObject({ reused: true, idempotencyKey: created.idempotencyKey });
    expect(r.step).toMatchObject({ state: 'COMPLETED', reused: true, response: { ticketId: 'T-981' } });
    // Replaying the reused step is answered from the journal too.
    expect(
      await w.tool(t2, 2, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'other' }),
    ).toMatchObject({
      reused: true,
      step: { response: { ticketId: 'T-981' } },
    });

    const lent = await w.tool(t2, 3, 'crm/close_ticket', 'STARTED', { ticketId: 'T-981' });
    expect(lent).toMatchObject({ reused: false, idempotencyKey: closing.idempotencyKey });
    expect(lent.step.state).toBe('STARTED');
    await w.tool(t2, 3, 'crm/close_ticket', 'COMPLETED', { ticketId: 'T-981' }, { closed: true });

    // A second identical create in the same attempt is a second call: new key, not reused.
    const second = await w.tool(t2, 4, 'crm/create_ticket', 'STARTED', TICKET);
    expect(second.reused).toBe(false);
    expect(second.idempotencyKey).not.toBe(created.idempotencyKey);
    await w.tool(t2, 4, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-982' });
    // Different arguments: a new call with a new key.
    const other = await w.tool(t2, 5, 'crm/create_ticket', 'STARTED', { ...TICKET, priority: 'low' });
    expect(other.reused).toBe(false);
    expect(other.idempotencyKey).not.toBe(created.idempotencyKey);
    expect(other.idempotencyKey).not.toBe(second.idempotencyKey);
    await w.tool(
      t2,
      5,
      'crm/create_ticket',
      'COMPLETED',
      { ...TICKET, priority: 'low' },
      { ticketId: 'T-983' },
    );
    await w.complete(t2, GOOD);

    const h = (await instance(engine, id)).history.filter((e) => e.attempt === 2 && e.sequence === 2);
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({
      eventType: 'STEP_COMPLETED',
      data: { reused: true, from: { attempt: 1, sequence: 1 } },
    });
    const steps = (await taskOf(engine, t1.id)).steps.filter((s) => s.attempt === 2);
    expect(steps.map((s) => [s.sequence, s.state, s.reused])).toEqual([
      [1, 'COMPLETED', false],
      [2, 'COMPLETED', true],
      [3, 'COMPLETED', false],
      [4, 'COMPLETED', false],
      [5, 'COMPLETED', false],
    ]);
    await auditOk(engine, id);
  });

  it('a keyless write left STARTED when the attempt fails is settled OUTCOME_UNKNOWN, not retried blindly', async () => {
    const id = await startTriage(engine, 'C-7', 'reuse');
    const t1 = await w.fetchOne({ topic: 't-reuse' });
    await w.tool(t1, 1, 'crm/send_email', 'STARTED', { to: 'c7@example.com' });
    const failed = await w.failRaw(t1, 'WORKER_CRASHED');
    expect(failed.data!.failTask).toMatchObject({
      state: 'FAILED',
      attempt: 1,
      errorType: 'TOOL_OUTCOME_UNKNOWN',
    });
    expect(await w.fetch({ topic: 't-reuse' })).toEqual([]);
    const [inc] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: t1.id });
    // The person says it happened: a later call with the same arguments is answered with their fact.
    await engine.ok(
      engine.adminToken,
      `mutation($input: ResolveIncidentInput!) { resolveIncident(input: $input) { id } }`,
      {
        input: { id: inc.id, comment: 'sent', happened: true, result: { messageId: 'M-1' } },
      },
    );
    const t2 = await w.fetchOne({ topic: 't-reuse' });
    expect(t2.attempt).toBe(1);
    expect(t2.steps[0]).toMatchObject({
      state: 'OUTCOME_UNKNOWN',
      response: { happened: true, result: { messageId: 'M-1' } },
    });
    await w.complete(t2, GOOD);
    expect((await instance(engine, id)).state).toBe('COMPLETED');
  });

  it('after a person settles an unknown outcome, the same attempt can fail again (a new failure, not a replay)', async () => {
    await startTriage(engine, 'C-8', 'reuse');
    const t1 = await w.fetchOne({ topic: 't-reuse' });
    await w.tool(t1, 1, 'crm/send_email', 'STARTED', { to: 'c8@example.com' });
    expect((await w.failRaw(t1, 'WORKER_CRASHED')).data!.failTask.errorType).toBe('TOOL_OUTCOME_UNKNOWN');
    const [inc] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: t1.id });
    await engine.ok(
      engine.adminToken,
      `mutation($input: ResolveIncidentInput!) { resolveIncident(input: $input) { id } }`,
      {
        input: { id: inc.id, comment: 'not sent', happened: false },
      },
    );
    const t2 = await w.fetchOne({ topic: 't-reuse' });
    expect(t2.attempt).toBe(1);
    // the same errorType again, then another one: each is a real failure of attempt 1, moving to attempt 2
    const again = await w.failRaw(t2, 'WORKER_CRASHED');
    expect(again.errors).toBeUndefined();
    expect(again.data!.failTask).toMatchObject({ state: 'OPEN', attempt: 2, errorType: 'WORKER_CRASHED' });
    const t3 = await w.fetchOne({ topic: 't-reuse' });
    expect(t3).toMatchObject({ id: t1.id, attempt: 2 });
    await w.complete(t3, GOOD);
  });

  it('over three attempts, one call stays one call: the latest outcome of a key is reused, and only once', async () => {
    await startTriage(engine, 'C-8', 'reuse');
    const t1 = await w.fetchOne({ topic: 't-reuse' });
    // attempt 1: a keyed write left in flight
    const k = (await w.tool(t1, 1, 'crm/create_ticket', 'STARTED', TICKET)).idempotencyKey;
    await w.failRaw(t1, 'WORKER_CRASHED');
    // attempt 2: the re-send under the lent key completes; the attempt then fails
    const t2 = await w.fetchOne({ topic: 't-reuse' });
    expect((await w.tool(t2, 1, 'crm/create_ticket', 'STARTED', TICKET)).idempotencyKey).toBe(k);
    await w.tool(t2, 1, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-77' });
    await w.failRaw(t2, 'MODEL_UNAVAILABLE');
    // attempt 3: the call completed under that key: reused, not re-sent
    const t3 = await w.fetchOne({ topic: 't-reuse' });
    expect(t3.attempt).toBe(3);
    const r = await w.tool(t3, 1, 'crm/create_ticket', 'STARTED', TICKET);
    expect(r).toMatchObject({
      reused: true,
      idempotencyKey: k,
      step: { state: 'COMPLETED', response: { ticketId: 'T-77' } },
    });
    // a second identical call in this attempt is a new call
    const second = await w.tool(t3, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect(second.reused).toBe(false);
    expect(second.idempotencyKey).not.toBe(k);
    await w.tool(t3, 2, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-78' });
    await w.complete(t3, GOOD);
  });

  it('a reused copy is not a second call: attempt 3 reuses one ticket, then makes a new one', async () => {
    await startTriage(engine, 'C-9', 'reuse');
    const t1 = await w.fetchOne({ topic: 't-reuse' });
    const k = (await w.tool(t1, 1, 'crm/create_ticket', 'STARTED', TICKET)).idempotencyKey;
    await w.tool(t1, 1, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-90' });
    await w.failRaw(t1, 'MODEL_UNAVAILABLE');
    const t2 = await w.fetchOne({ topic: 't-reuse' });
    expect(await w.tool(t2, 1, 'crm/create_ticket', 'STARTED', TICKET)).toMatchObject({
      reused: true,
      idempotencyKey: k,
    });
    await w.failRaw(t2, 'MODEL_UNAVAILABLE');
    const t3 = await w.fetchOne({ topic: 't-reuse' });
    expect(await w.tool(t3, 1, 'crm/create_ticket', 'STARTED', TICKET)).toMatchObject({
      reused: true,
      idempotencyKey: k,
    });
    const second = await w.tool(t3, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect(second.reused).toBe(false);
    expect(second.idempotencyKey).not.toBe(k);
    await w.tool(t3, 2, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-91' });
    await w.complete(t3, GOOD);
  });
});
