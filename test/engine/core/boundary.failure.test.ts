/**
 * The failure boundary of an agent node (SPEC §15.4): a task that exhausts its attempts moves the token
 * to on_failure instead of opening a TASK_FAILED incident; BOUNDARY_FAILURE carries the last error. Every
 * way an attempt fails for good takes it: a reported failure, output that breaks the contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { deployBoundaries, eventsOf, start, taskRow } from './boundary.setup.js';
import { D, auditOk, incidentsOf, instance } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await deployBoundaries(engine, {
    'bnd-fail': { onFailure: true, maxAttempts: 2 },
    'bnd-invalid': { onFailure: true, maxAttempts: 1, outputSchema: '{ type: object, required: [ok] }' },
    'bnd-plain': { maxAttempts: 1 },
  });
  w = new WorkerSim(
    engine,
    await engine.principal('WORKER', 'w', { topics: ['bnd-fail', 'bnd-invalid', 'bnd-plain'] }),
  );
});
afterAll(() => engine?.close());

function fail(task: Locked, errorType: string, errorMessage: string) {
  return engine.ok(w.token, Q.fail, {
    input: {
      taskId: task.id,
      workerId: w.workerId,
      attempt: task.attempt,
      errorType,
      errorMessage,
      retryTimeoutMs: 0,
    },
  });
}

/** The token left `work` for `fallback`: the user task there is open, and no incident was opened. */
async function expectOnFailurePath(id: string, taskId: string) {
  expect(await instance(engine, id)).toMatchObject({ state: 'ACTIVE', currentNodeId: 'fallback' });
  const { processInstance } = await engine.ok(engine.adminToken, D.userTasks, { id });
  expect(processInstance?.userTasks).toEqual([
    expect.objectContaining({ nodeId: 'fallback', state: 'OPEN' }),
  ]);
  expect(await incidentsOf(engine, { taskId })).toEqual([]);
}

describe('the failure boundary', () => {
  it('the last failed attempt takes on_failure, with the last error in history', async () => {
    const id = await start(engine, 'bnd-fail');
    const t1 = await w.fetchOne({ topic: 'bnd-fail' });
    expect((await fail(t1, 'MODEL_UNAVAILABLE', 'gemini is down')).failTask.state).toBe('OPEN');
    expect(await eventsOf(engine, id, 'BOUNDARY_FAILURE')).toEqual([]);
    const t2 = await w.fetchOne({ topic: 'bnd-fail' });
    expect(t2.attempt).toBe(2);
    const failed = await fail(t2, 'MODEL_REFUSED', 'the model refused to answer');
    expect(failed.failTask).toMatchObject({ state: 'FAILED', errorType: 'MODEL_REFUSED' });

    const [b] = await eventsOf(engine, id, 'BOUNDARY_FAILURE');
    expect(b).toMatchObject({ actor: `worker:${w.workerId}`, taskId: t2.id, attempt: 2 });
    expect(b.data).toEqual({
      nodeId: 'work',
      attempts: 2,
      errorType: 'MODEL_REFUSED',
      errorMessage: 'the model refused to answer',
      // the attempt's metadata (SPEC §15.5) is kept on the failure path too
      metadata: expect.objectContaining({ errorType: 'MODEL_REFUSED' }),
      to: 'fallback',
    });
    const h = (await instance(engine, id)).history.map((e) => e.eventType);
    expect(h).not.toContain('TASK_FAILED');
    expect(h.slice(h.indexOf('BOUNDARY_FAILURE'))).toEqual(['BOUNDARY_FAILURE', 'USER_TASK_CREATED']);
    expect(await taskRow(engine, t2.id)).toMatchObject({ state: 'FAILED', boundary: 'FAILURE' });
    await expectOnFailurePath(id, t2.id);
    // the process went on from on_failure: the task is not retried behind it
    const retry = await engine.gql(engine.adminToken, D.retry, { id: t2.id });
    expect(codeOf(retry)).toBe('VALIDATION_FAILED');
    expect(retry.errors?.[0].message).toContain('on_failure');
    // a re-sent failure report is answered as stored, and moves nothing twice
    expect((await fail(t2, 'MODEL_REFUSED', 'the model refused to answer')).failTask.state).toBe('FAILED');
    expect(await eventsOf(engine, id, 'BOUNDARY_FAILURE')).toHaveLength(1);
    await auditOk(engine, id);
  });

  it('output that breaks the contract on the last attempt takes on_failure too', async () => {
    const id = await start(engine, 'bnd-invalid');
    const task = await w.fetchOne({ topic: 'bnd-invalid' });
    expect((await w.complete(task, { outcome: { nope: 1 } })).state).toBe('FAILED');
    const [b] = await eventsOf(engine, id, 'BOUNDARY_FAILURE');
    expect(b.data).toMatchObject({ errorType: 'INVALID_MODEL_OUTPUT', attempts: 1, to: 'fallback' });
    expect(String((b.data as { errorMessage: string }).errorMessage)).toContain('output_schema');
    await expectOnFailurePath(id, task.id);
    await auditOk(engine, id);
  });

  it('without on_failure the task fails into a TASK_FAILED incident, as before', async () => {
    const id = await start(engine, 'bnd-plain');
    const task = await w.fetchOne({ topic: 'bnd-plain' });
    expect((await fail(task, 'MODEL_REFUSED', 'no')).failTask.state).toBe('FAILED');
    expect(await eventsOf(engine, id, 'BOUNDARY_FAILURE')).toEqual([]);
    expect(await incidentsOf(engine, { type: 'TASK_FAILED', taskId: task.id })).toHaveLength(1);
    expect(await instance(engine, id)).toMatchObject({ state: 'ACTIVE', currentNodeId: 'work' });
    expect(await taskRow(engine, task.id)).toMatchObject({ state: 'FAILED', boundary: null });
  });
});
