/**
 * Starting an instance writes INSTANCE_STARTED and what entering the start node writes in one last
 * statement (instances/pending.ts), and does not update the row it has just inserted. Whatever the start
 * node is — a user task, a service task, an end — the instance row, its work and its history come out as
 * before: in order, hash-chained, and the service task's notice wakes a fetch that is already waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { D, events, instance } from './helpers.js';

const SOURCE = `kind: Process
key: starts-at-review
start: review
nodes:
  - { id: review, type: user_task, candidate_groups: [support], next: done }
  - { id: done, type: end }
---
kind: Process
key: starts-at-end
start: done
nodes:
  - { id: done, type: end }
---
kind: Process
key: starts-at-work
start: work
nodes:
  - { id: work, type: service, topic: t-start, next: done }
  - { id: done, type: end }
`;

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, { s: SOURCE });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: ['t-start'] }), 'w-start');
});
afterAll(() => engine?.close());

const start = async (key: string) =>
  (await engine.ok(engine.adminToken, Q.start, { key, v: {} })).startProcess.id as string;
const verify = async (id: string) => (await engine.ok(engine.adminToken, D.audit, { id })).verifyAudit;

describe('startProcess, whatever the start node', () => {
  it('a user task: the instance waits at it, with its two rows in order', async () => {
    const id = await start('starts-at-review');
    const inst = await instance(engine, id);
    expect(inst).toMatchObject({ state: 'ACTIVE', currentNodeId: 'review' });
    expect(await events(engine, id)).toEqual(['INSTANCE_STARTED', 'USER_TASK_CREATED']);
    expect(inst.history.map((h: { seq: number }) => h.seq)).toEqual([1, 2]);
    const { processInstance } = await engine.ok(engine.adminToken, D.userTasks, { id });
    expect(processInstance!.userTasks).toEqual([
      expect.objectContaining({ nodeId: 'review', state: 'OPEN' }),
    ]);
    expect(await verify(id)).toMatchObject({ valid: true, rows: 2, firstBrokenSeq: null });
  });

  it('an end node: the instance is completed at once', async () => {
    const id = await start('starts-at-end');
    expect(await instance(engine, id)).toMatchObject({ state: 'COMPLETED', currentNodeId: 'done' });
    expect(await events(engine, id)).toEqual(['INSTANCE_STARTED', 'INSTANCE_COMPLETED']);
    expect(await verify(id)).toMatchObject({ valid: true, rows: 2, firstBrokenSeq: null });
  });

  it('a service task: a fetch already waiting is woken by its notice and the history reads on', async () => {
    const waiting = w.fetchOne({ topic: 't-start', waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300)); // the fetch is parked, listening
    const t0 = Date.now();
    const id = await start('starts-at-work');
    const task = await waiting;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(task).toBeTruthy();
    expect(await instance(engine, id)).toMatchObject({ state: 'ACTIVE', currentNodeId: 'work' });
    await w.complete(task, { done: true });
    expect(await events(engine, id)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    expect(await verify(id)).toMatchObject({ valid: true, rows: 5, firstBrokenSeq: null });
  });
});
