/**
 * A long poll sleeps until its deadline — not in a tight loop — while another project's lease is expired
 * (fetchAndLock, SPEC §3). It counts the statements the engine runs meanwhile by the checkouts from its
 * pool (exact, at once), not by PostgreSQL's commit statistics (flushed up to a second or more late).
 */
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { serviceProcess } from './helpers.js';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine?.close());

describe('fetchAndLock long polling', () => {
  it("a long poll sleeps until the deadline, not in a tight loop, while another project's lease is expired", async () => {
    const adminB = await engine.principal('ADMIN', 'admin-b', { projectId: 'proj-b' });
    await engine.ok(adminB, Q.deploy, { s: serviceProcess('other', 't-shared') });
    await engine.ok(engine.adminToken, Q.deploy, { s: serviceProcess('mine', 't-shared') });
    const wb = new WorkerSim(
      engine,
      await engine.principal('WORKER', 'wb', { topics: ['t-shared'], projectId: 'proj-b' }),
      'wb-1',
    );
    await engine.ok(adminB, Q.start, { key: 'other', v: { n: 1 } });
    const tb = await wb.fetchOne({ topic: 't-shared' });
    await wb.expireLease(tb);
    // Project B's expired lease is not ours to take, nor a reason to wake up every few milliseconds.
    const wa = new WorkerSim(
      engine,
      await engine.principal('WORKER', 'wa', { topics: ['t-shared'] }),
      'wa-1',
    );
    // Every statement the engine runs takes a connection from its pool: a loop shows as many checkouts.
    const pool = (engine.context.db as unknown as { $client: Pool }).$client; // drizzle's pool
    let checkouts = 0;
    const count = () => {
      checkouts++;
    };
    pool.on('acquire', count);
    try {
      const t0 = Date.now();
      expect(await wa.fetch({ topic: 't-shared', waitMs: 1500 })).toEqual([]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
      // a claim, a look for the next due time, a last claim (and a few for authentication and the worker's
      // heartbeat); a 5 ms loop would take ~300 over these 1.5 s
      expect(checkouts).toBeGreaterThan(0); // the count sees the engine's statements at all
      expect(checkouts).toBeLessThan(30);
    } finally {
      pool.off('acquire', count);
    }
    // Project B's own worker still re-acquires it.
    expect((await wb.fetchOne({ topic: 't-shared' })).id).toBe(tb.id);
  });
});
