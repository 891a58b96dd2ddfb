/**
 * Completion and failure (SPEC §3, §7): re-sent reports get the stored outcome without a second history
 * row; a stored failure never answers a later completion; the output contract (only the result variable,
 * output_schema, the confidence threshold) routes to on_invalid_output / on_low_confidence when declared
 * (a review user_task a person completes), and otherwise fails the attempt (INVALID_MODEL_OUTPUT /
 * LOW_CONFIDENCE) so it retries.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, json, Q } from '../../helpers/fixtures.js';
import { watchRoundTrips } from '../../helpers/round-trips.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { D, GOOD, auditOk, events, instance, startTriage, taskOf, triageProcess } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: [
      CRM_SERVER(),
      triageProcess({ key: 'plain', topic: 't-plain', maxAttempts: 3 }),
      triageProcess({
        key: 'routed',
        topic: 't-routed',
        review: true,
        extra: ['on_invalid_output: review', 'on_low_confidence: review'],
      }),
      triageProcess({ key: 'strict', topic: 't-strict', maxAttempts: 3 }),
    ].join('---'),
  });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker', { topics: ['*'] }), 'w-1');
});
afterAll(() => engine?.close());

async function take(key: string, topic: string): Promise<{ id: string; task: Locked }> {
  const id = await startTriage(engine, 'C-42', key);
  const task = await w.fetchOne({ topic });
  expect(task.processInstanceId).toBe(id);
  return { id, task };
}

const failWith = (task: { id: string; attempt: number }, errorType: string, retryTimeoutMs = 0) =>
  engine.gql(w.token, Q.fail, {
    input: { taskId: task.id, workerId: 'w-1', attempt: task.attempt, errorType, retryTimeoutMs },
  });

const withSteps = (task: Locked, steps: unknown[], variables: unknown = GOOD) =>
  engine.gql(w.token, Q.complete, {
    input: { taskId: task.id, workerId: 'w-1', attempt: task.attempt, variables, metadata: {}, steps },
  });
const modelEnd = (sequence: number, content = 'done') => ({
  sequence,
  kind: 'MODEL_CALL',
  state: 'COMPLETED',
  model: 'gemini-3.6-flash',
  request: { model: 'gemini-3.6-flash', messagesHash: `h${sequence}` },
  response: { role: 'assistant', content },
  usage: { inputTokens: 10, outputTokens: 5 },
});

describe('completeTask carrying the last step ends (one request fewer per task)', () => {
  it('journals the steps first, then completes; a re-send after completion gets the stored outcome', async () => {
    const { id, task } = await take('plain', 't-plain');
    await w.model(task, 1, 'STARTED');
    const r = await withSteps(task, [modelEnd(1)]);
    expect(r.errors).toBeUndefined();
    expect(r.data!.completeTask).toMatchObject({ state: 'COMPLETED' });
    const inst = await instance(engine, id);
    expect(
      inst.tasks[0].steps.map((s: { sequence: number; state: string }) => `${s.sequence}:${s.state}`),
    ).toEqual(['1:COMPLETED']);
    const h1 = inst.history;
    // the answer was lost: the worker sends the same completion again
    const again = await withSteps(task, [modelEnd(1)]);
    expect(again.errors).toBeUndefined();
    expect(again.data!.completeTask).toEqual(r.data!.completeTask);
    expect((await instance(engine, id)).history).toEqual(h1);
    await auditOk(engine, id);
  });

  it('a refused step refuses the completion, and nothing of either is written', async () => {
    const { id, task } = await take('plain', 't-plain');
    await w.model(task, 1, 'STARTED');
    // step 3 does not follow step 1: refused as journalSteps refuses it
    const r = await withSteps(task, [modelEnd(1), modelEnd(3)]);
    expect(codeOf(r)).toBe('SEQUENCE_OUT_OF_ORDER');
    expect(r.errors?.[0].message).toMatch(/^Step 1 of the batch/);
    expect((await taskOf(engine, task.id)).state).toBe('LEASED');
    const inst = await instance(engine, id);
    expect(inst.tasks[0].steps.map((s: { state: string }) => s.state)).toEqual(['STARTED']);
    // the worker's answer: the end alone, then the completion
    expect((await withSteps(task, [modelEnd(1)])).data!.completeTask).toMatchObject({ state: 'COMPLETED' });
  });
});

describe('completeTask carrying steps: one transaction, the separate path on a refusal', () => {
  /** `at` is the transaction's start: rows written in one transaction share it. */
  async function atOf(id: string): Promise<Record<string, string>> {
    const db = new pg.Client({ connectionString: engine.databaseUrl });
    await db.connect();
    try {
      const r = await db.query<{ event_type: string; at: Date }>(
        'SELECT event_type, at FROM history_events WHERE process_instance_id = $1 ORDER BY seq, idx',
        [id],
      );
      return Object.fromEntries(r.rows.map((x) => [x.event_type, x.at.toISOString()]));
    } finally {
      await db.end();
    }
  }

  it('journals the ends and completes in one transaction: the step row and TASK_COMPLETED share a moment', async () => {
    const { id, task } = await take('plain', 't-plain');
    await w.model(task, 1, 'STARTED');
    const r = await withSteps(task, [modelEnd(1)]);
    expect(r.data!.completeTask).toMatchObject({ state: 'COMPLETED' });
    const at = await atOf(id);
    expect(at.STEP_COMPLETED).toBeDefined();
    expect(at.TASK_COMPLETED).toBe(at.STEP_COMPLETED);
    await auditOk(engine, id);
  });

  it('takes four round trips to PostgreSQL: load, write with the reads, the updates, the last statement with COMMIT', async () => {
    const { id, task } = await take('plain', 't-plain');
    await w.model(task, 1, 'STARTED');
    const trips = watchRoundTrips(engine);
    try {
      expect((await withSteps(task, [modelEnd(1)])).data!.completeTask).toMatchObject({ state: 'COMPLETED' });
    } finally {
      trips.stop();
    }
    // (the process's price and definition caches fill on first use, and every 30 s: not counted)
    const cacheFill = (t: string[]) => t.length === 1 && /FROM model_prices|from "definitions"/.test(t[0]);
    const completion = trips
      .connections()
      .find((t) => t[0]?.[2] === 'abada_journal_load')
      ?.filter((t) => !cacheFill(t));
    expect(completion).toEqual([
      ['BEGIN', 'abada_tasks_lock', 'abada_journal_load'],
      ['abada_journal_write', 'abada_task_completion_reads'],
      ['abada_task_complete'],
      ['abada_history_completion_tail', 'COMMIT'],
    ]);
    // the instance ended in the completion's own update: TASK_COMPLETED, then INSTANCE_COMPLETED
    const inst = await instance(engine, id);
    expect(inst.state).toBe('COMPLETED');
    expect((await events(engine, id)).slice(-2)).toEqual(['TASK_COMPLETED', 'INSTANCE_COMPLETED']);
    await auditOk(engine, id);
  });

  it('a refused completion keeps its steps: they are journaled on the separate path, as before', async () => {
    const { id, task } = await take('plain', 't-plain');
    await w.model(task, 1, 'STARTED');
    // refused inside the completion's own checks, after the steps were applied in its transaction
    const r = await withSteps(task, [modelEnd(1)], ['not', 'an', 'object']);
    expect(codeOf(r)).toBe('VALIDATION_FAILED');
    expect((await taskOf(engine, task.id)).state).toBe('LEASED');
    const inst = await instance(engine, id);
    expect(inst.tasks[0].steps.map((s: { state: string }) => s.state)).toEqual(['COMPLETED']);
    // the worker corrects its output: the ends are already journaled, the completion goes through
    expect((await withSteps(task, [modelEnd(1)])).data!.completeTask).toMatchObject({ state: 'COMPLETED' });
    expect((await events(engine, id)).filter((e) => e === 'STEP_COMPLETED')).toHaveLength(1);
    await auditOk(engine, id);
  });
});

describe('completeTask / failTask', () => {
  it('a re-sent completion gets the stored outcome and writes no second history row', async () => {
    const { id, task } = await take('plain', 't-plain');
    const open = await w.model(task, 1, 'STARTED');
    expect(open.step.state).toBe('STARTED');
    // A step still running: the attempt cannot complete yet.
    expect(codeOf(await w.completeRaw(task, GOOD))).toBe('SEQUENCE_OUT_OF_ORDER');
    await w.model(task, 1, 'COMPLETED');
    const first = await w.complete(task, GOOD);
    expect(first).toMatchObject({ state: 'COMPLETED', attempt: 1 });
    const h1 = (await instance(engine, id)).history;
    const again = await w.complete(task, GOOD);
    expect(again).toEqual(first);
    expect((await instance(engine, id)).history).toEqual(h1);
    // A different completion of the same attempt is not a re-send: it does not get the stored success.
    const other = await w.completeRaw(task, {
      triage: { ticketId: 'T-000', priority: 'low', _confidence: 99 },
    });
    expect(codeOf(other)).toBe('LEASE_NOT_HELD');
    expect(json((await instance(engine, id)).variables).triage).toEqual({
      ticketId: 'T-981',
      priority: 'high',
    });
    // A failure report after the completion does not undo it.
    expect(codeOf(await failWith(task, 'TOO_LATE'))).toBe('LEASE_NOT_HELD');
    expect((await taskOf(engine, task.id)).state).toBe('COMPLETED');
    expect(h1.filter((e) => e.eventType === 'TASK_COMPLETED')).toHaveLength(1);
  });

  it('a re-sent failure gets the stored outcome; it never shadows the completion of the next attempt', async () => {
    const { id, task } = await take('plain', 't-plain');
    const f1 = await failWith(task, 'MODEL_UNAVAILABLE');
    expect(f1.data!.failTask).toMatchObject({ state: 'OPEN', attempt: 2, errorType: 'MODEL_UNAVAILABLE' });
    const n = (await events(engine, id)).length;
    const f1again = await failWith(task, 'MODEL_UNAVAILABLE');
    expect(f1again.data!.failTask).toEqual(f1.data!.failTask);
    expect((await events(engine, id)).length).toBe(n);
    // Another failure for the same attempt is not a re-send.
    expect(codeOf(await failWith(task, 'SOMETHING_ELSE'))).toBe('LEASE_NOT_HELD');
    // The stored failure of attempt 1 does not answer a completion of attempt 1 (the lease is gone).
    expect(codeOf(await w.completeRaw(task, GOOD))).toBe('LEASE_NOT_HELD');

    const t2 = await w.fetchOne({ topic: 't-plain' });
    expect(t2).toMatchObject({ id: task.id, attempt: 2 });
    expect((await w.complete(t2, GOOD)).state).toBe('COMPLETED');
    const h = (await instance(engine, id)).history;
    // Re-sent failure for attempt 1: answered from the store, nothing changes.
    const late = await failWith(task, 'MODEL_UNAVAILABLE');
    expect(late.errors).toBeUndefined();
    expect(late.data!.failTask).toMatchObject({ id: task.id, state: 'COMPLETED', attempt: 2 });
    expect((await instance(engine, id)).history).toEqual(h);
    expect((await instance(engine, id)).state).toBe('COMPLETED');
    expect(h.map((e) => e.eventType)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'ATTEMPT_FAILED',
      'TASK_LEASED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    await auditOk(engine, id);
  });

  it('only the result variable may be written', async () => {
    const { id, task } = await take('plain', 't-plain');
    const extra = await w.completeRaw(task, { ...GOOD, approved: true });
    expect(codeOf(extra)).toBe('VALIDATION_FAILED');
    expect(extra.errors![0].extensions!.errors).toEqual([
      { path: 'variables', message: 'not allowed: approved' },
    ]);
    expect(codeOf(await w.completeRaw(task, { other: 1 }))).toBe('VALIDATION_FAILED');
    expect(codeOf(await w.completeRaw(task, {}))).toBe('VALIDATION_FAILED');
    expect((await taskOf(engine, task.id)).state).toBe('LEASED');
    await w.complete(task, GOOD);
    const inst = await instance(engine, id);
    expect(inst.variables).toEqual({
      customerId: 'C-42',
      message: 'My parcel never arrived',
      triage: { ticketId: 'T-981', priority: 'high' },
    });
  });
});

describe('the output contract', () => {
  it('on_invalid_output routes to the review user_task; a person completes it and the process moves on', async () => {
    const { id, task } = await take('routed', 't-routed');
    const done = await w.complete(task, { triage: { summary: 'no ticket', _confidence: 95 } });
    expect(done.state).toBe('COMPLETED');
    let inst = await instance(engine, id);
    expect(inst.currentNodeId).toBe('review');
    const completed = inst.history.find((e) => e.eventType === 'TASK_COMPLETED');
    expect(json(completed?.data).route).toMatchObject({ reason: 'INVALID_OUTPUT', to: 'review' });
    const [ut] = (await engine.ok(engine.adminToken, D.userTasks, { id })).processInstance!.userTasks;
    expect(ut).toMatchObject({ nodeId: 'review', state: 'OPEN' });
    expect(codeOf(await engine.gql(w.token, D.completeUserTask, { id: ut.id, v: {} }))).toBe('FORBIDDEN');
    const outsider = await engine.principal('HUMAN', 'bob-finance', { groups: ['finance'] });
    expect(codeOf(await engine.gql(outsider, D.completeUserTask, { id: ut.id, v: {} }))).toBe('FORBIDDEN');
    const lead = await engine.principal('HUMAN', 'sue-support', { groups: ['support'] });
    const r = await engine.ok(lead, D.completeUserTask, { id: ut.id, v: { reviewed: true } });
    expect(r.completeUserTask.state).toBe('COMPLETED');
    inst = await instance(engine, id);
    expect(inst.state).toBe('COMPLETED');
    expect(inst.history.map((e) => e.eventType).slice(-4)).toEqual([
      'TASK_COMPLETED',
      'USER_TASK_CREATED',
      'USER_TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    expect(codeOf(await engine.gql(lead, D.completeUserTask, { id: ut.id, v: {} }))).not.toBeUndefined();
  });

  it('on_low_confidence routes to review', async () => {
    const { id, task } = await take('routed', 't-routed');
    await w.complete(task, { triage: { ticketId: 'T-1', priority: 'low', _confidence: 50 } });
    const inst = await instance(engine, id);
    expect(inst.currentNodeId).toBe('review');
    expect(json(inst.history.find((e) => e.eventType === 'TASK_COMPLETED')?.data).route).toMatchObject({
      reason: 'LOW_CONFIDENCE',
      to: 'review',
    });
    // Confidence also comes from metadata when the value does not carry it.
    const { id: id2, task: t2 } = await take('routed', 't-routed');
    await w.complete(t2, { triage: { ticketId: 'T-2', priority: 'low' } }, { confidence: 99 });
    expect((await instance(engine, id2)).currentNodeId).toBe('done');
  });

  it('without routes, invalid output and low confidence fail the attempt, which retries', async () => {
    const { id, task } = await take('strict', 't-strict');
    const r1 = await w.completeRaw(task, { triage: { summary: 'nope', _confidence: 99 } });
    expect(r1.data!.completeTask).toMatchObject({ state: 'OPEN', attempt: 2 });
    expect((await taskOf(engine, task.id)).state).toBe('OPEN');
    // re-sent: the stored outcome, no second ATTEMPT_FAILED
    const n = (await events(engine, id)).length;
    expect(
      (await w.completeRaw(task, { triage: { summary: 'nope', _confidence: 99 } })).data!.completeTask,
    ).toEqual(r1.data!.completeTask);
    expect((await events(engine, id)).length).toBe(n);

    const t2 = await w.fetchOne({ topic: 't-strict', waitMs: 3000 });
    expect(t2.attempt).toBe(2);
    const r2 = await w.completeRaw(t2, { triage: { ticketId: 'T-1', priority: 'low', _confidence: 10 } });
    expect(r2.data!.completeTask).toMatchObject({ state: 'OPEN', attempt: 3 });
    const t3 = await w.fetchOne({ topic: 't-strict', waitMs: 5000 });
    expect(t3.attempt).toBe(3);
    expect((await w.complete(t3, GOOD)).state).toBe('COMPLETED');
    const h = (await instance(engine, id)).history;
    expect(
      h.filter((e) => e.eventType === 'ATTEMPT_FAILED').map((e) => [e.attempt, json(e.data).errorType]),
    ).toEqual([
      [1, 'INVALID_MODEL_OUTPUT'],
      [2, 'LOW_CONFIDENCE'],
    ]);
    expect((await instance(engine, id)).state).toBe('COMPLETED');
  });
});
