/**
 * Starting an instance writes INSTANCE_STARTED and what entering the start node writes in one last
 * statement (instances/last-writes.ts), and does not update the row it has just inserted; with a task at
 * the start node, the instance's row and the task's are sent together with it (ids made in the engine).
 * Whatever the start node is — a user task, a service task, an end — the instance row, its work and its
 * history come out in order, hash-chained, and the service task's notice wakes a fetch already waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { watchRoundTrips } from '../../helpers/round-trips.js';
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
  it('a user task: the instance waits at it, its two events in order in one row', async () => {
    const id = await start('starts-at-review');
    const inst = await instance(engine, id);
    expect(inst).toMatchObject({ state: 'ACTIVE', currentNodeId: 'review' });
    expect(await events(engine, id)).toEqual(['INSTANCE_STARTED', 'USER_TASK_CREATED']);
    expect(inst.history.map((h: { seq: number; row: number }) => [h.seq, h.row])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    const { processInstance } = await engine.ok(engine.adminToken, D.userTasks, { id });
    expect(processInstance!.userTasks).toEqual([
      expect.objectContaining({ nodeId: 'review', state: 'OPEN' }),
    ]);
    expect(await verify(id)).toMatchObject({ valid: true, rows: 1, events: 2, firstBrokenSeq: null });
  });

  it('an end node: the instance is completed at once', async () => {
    const id = await start('starts-at-end');
    expect(await instance(engine, id)).toMatchObject({ state: 'COMPLETED', currentNodeId: 'done' });
    expect(await events(engine, id)).toEqual(['INSTANCE_STARTED', 'INSTANCE_COMPLETED']);
    expect(await verify(id)).toMatchObject({ valid: true, rows: 1, events: 2, firstBrokenSeq: null });
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
    // one row per commit: the start, the lease, the completion
    expect(await verify(id)).toMatchObject({ valid: true, rows: 3, events: 5, firstBrokenSeq: null });
  });

  it('a new version deployed after a start: the next start runs it, the one before keeps its own', async () => {
    const first = await start('starts-at-work'); // the engine now keeps this version's frozen form
    const v2 = SOURCE.split('---')
      .find((d) => d.includes('key: starts-at-work'))!
      .replace('t-start', 't-start-v2');
    const { deploy } = await engine.ok(engine.adminToken, Q.deploy, { s: v2 });
    const version = deploy.definitions[0].version as number;
    const second = await start('starts-at-work');
    const history = async (id: string) => (await instance(engine, id)).history[0].data;
    const topicOf = async (id: string) => (await instance(engine, id)).tasks[0].topicName;
    expect(await history(first)).toMatchObject({ version: version - 1 });
    expect(await topicOf(first)).toBe('t-start');
    expect(await history(second)).toMatchObject({ version });
    expect(await topicOf(second)).toBe('t-start-v2');
  });

  it('a task at the start node: three round trips — the load, every row with the last statement, COMMIT', async () => {
    await start('starts-at-work'); // the definition's rows are read once per process before this
    const trips = watchRoundTrips(engine);
    let id: string;
    try {
      id = await start('starts-at-work');
    } finally {
      trips.stop();
    }
    const started = trips.connections().find((t) => t[0]?.[0] === 'BEGIN');
    expect(started?.map((t) => t.length)).toEqual([2, 3, 1]);
    // the latest version's id; its frozen form was read by the first start and is kept by the engine
    expect(started?.[0][1]).toBe('abada_definition_latest');
    expect(started?.[1][0]).toBe('abada_instance_insert');
    expect(started?.[1][1]).toBe('abada_task_insert');
    expect(started?.[1][2]).toBe('abada_history_last_writes');
    expect(started?.[2]).toEqual(['COMMIT']);
    // the ids made in the engine are the rows' ids, time-ordered UUIDv7
    const inst = await instance(engine, id!);
    expect(inst.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(inst.tasks[0].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(await events(engine, id!)).toEqual(['INSTANCE_STARTED', 'TASK_CREATED']);
    expect(await verify(id!)).toMatchObject({ valid: true, rows: 1, events: 2, firstBrokenSeq: null });
  });
});
