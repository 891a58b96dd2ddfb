/**
 * taskChanged delivers the task as it stands after each change, even when a task returns to a state it
 * had moments before (OPEN on attempt 1, then OPEN on attempt 2 after a failure).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { deployPay } from '../engine/approvals/setup.js';
import { STARTED_MS, settle, subscribe, type Subscriber } from '../helpers/ws.js';

let engine: TestEngine;
let w: WorkerSim;
let sub: Subscriber | null = null;

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, ['retry']);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: ['retry'] }), 'w-1');
});
afterAll(async () => {
  await sub?.dispose().catch(() => {});
  await engine?.close();
});

describe('taskChanged', () => {
  it('a task reopened on the next attempt is delivered with that attempt', async () => {
    sub = subscribe(engine.url, engine.adminToken, `subscription { taskChanged { id state attempt } }`);
    await sub.connected;
    await settle(STARTED_MS);
    await engine.ok(engine.adminToken, `mutation { startProcess(key: "retry") { id } }`);
    // A notice is delivered as the task stands when it is read, so fetching before the OPEN notice has
    // been read would let it arrive as LOCKED: wait for it first.
    const opened = await sub.next((d) => d.taskChanged.state === 'OPEN');
    const t = await w.fetchOne({ topic: 'retry' });
    expect(t.id).toBe(opened.data.taskChanged.id);
    expect((await w.failRaw(t, 'MODEL_ERROR', 0)).data?.failTask).toMatchObject({
      state: 'OPEN',
      attempt: 2,
    });
    const reopened = await sub.next((d) => d.taskChanged.id === t.id && d.taskChanged.attempt === 2, 2000);
    expect(reopened.data.taskChanged).toEqual({ id: t.id, state: 'OPEN', attempt: 2 });
  });
});
