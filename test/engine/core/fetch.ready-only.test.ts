/**
 * The fetch's two ways (issue 18): with no expired lease on the requested topics, the claim is one
 * statement in its own transaction; with one, the fetch falls back to the transaction that re-acquires
 * it first (its checks run in that transaction). Either way an expired lease is taken before ready work,
 * each lease has one audit row, and every chain verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { auditOk, events, startTriage, triageProcess } from './helpers.js';

let engine: TestEngine;
let token: string;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'ro-a', topic: 'ro-a' })}---${triageProcess({ key: 'ro-b', topic: 'ro-b' })}`,
  });
  token = await engine.principal('WORKER', 'ro-worker', { topics: ['*'] });
});
afterAll(() => engine?.close());

describe('fetchAndLock, ready work and expired leases', () => {
  it('an expired lease on the topic goes first, ahead of ready work; then ready work', async () => {
    const w1 = new WorkerSim(engine, token, 'ro-1');
    const w2 = new WorkerSim(engine, token, 'ro-2');
    const first = await startTriage(engine, 'C-1', 'ro-a');
    const lost = await w1.fetchOne({ topic: 'ro-a' });
    const ready = [await startTriage(engine, 'C-2', 'ro-a'), await startTriage(engine, 'C-3', 'ro-a')];
    await w1.expireLease(lost);

    const [again] = await w2.fetch({ topic: 'ro-a', maxTasks: 1 });
    expect(again).toMatchObject({ id: lost.id, attempt: 1, processInstanceId: first });
    const got = await w2.fetch({ topic: 'ro-a', maxTasks: 5 });
    expect(got.map((t) => t.processInstanceId).sort()).toEqual([...ready].sort());
    expect(await events(engine, first)).toEqual(
      expect.arrayContaining(['TASK_LEASED', 'TASK_LEASE_REACQUIRED']),
    );
    for (const id of ready) {
      expect((await events(engine, id)).filter((e) => e === 'TASK_LEASED')).toHaveLength(1);
      await auditOk(engine, id);
    }
    await auditOk(engine, first);
  });

  it('an expired lease on another topic does not hold back ready work of this one', async () => {
    const w1 = new WorkerSim(engine, token, 'ro-3');
    const w2 = new WorkerSim(engine, token, 'ro-4');
    const other = await startTriage(engine, 'C-4', 'ro-b');
    const stale = await w1.fetchOne({ topic: 'ro-b' });
    await w1.expireLease(stale);
    const mine = await startTriage(engine, 'C-5', 'ro-a');
    const [got] = await w2.fetch({ topic: 'ro-a', maxTasks: 5 });
    expect(got.processInstanceId).toBe(mine);
    // the expired one is still there for a fetch of its own topic, on the same attempt
    const again = await w2.fetchOne({ topic: 'ro-b' });
    expect(again).toMatchObject({ id: stale.id, attempt: 1, processInstanceId: other });
  });

  it('nothing ready and nothing expired: an empty answer, nothing written', async () => {
    const w = new WorkerSim(engine, token, 'ro-5');
    const before = await engine.context.db.execute('SELECT count(*)::int AS n FROM history');
    expect(await w.fetch({ topic: 'ro-a', maxTasks: 10 })).toEqual([]);
    const after = await engine.context.db.execute('SELECT count(*)::int AS n FROM history');
    expect(after.rows[0]).toEqual(before.rows[0]);
  });
});
