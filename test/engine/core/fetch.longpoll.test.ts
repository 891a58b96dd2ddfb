/**
 * A long poll sleeps until its deadline — not in a tight loop — while another project's lease is expired
 * (fetchAndLock, SPEC §3). Its own engine and database: the commit counter it reads must not pick up
 * statistics that busier tests flush late (PostgreSQL's idle backends flush theirs up to 10 s later).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { letLeaseExpire, serviceProcess, sleep } from './helpers.js';

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
    await letLeaseExpire(wb, tb);
    // Project B's expired lease is not ours to take, nor a reason to wake up every few milliseconds.
    const wa = new WorkerSim(
      engine,
      await engine.principal('WORKER', 'wa', { topics: ['t-shared'] }),
      'wa-1',
    );
    const c = new pg.Client({ connectionString: engine.databaseUrl });
    await c.connect();
    try {
      const commits = async () => {
        await sleep(1100); // statistics are flushed at most once a second
        const r = await c.query(
          'SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = current_database()',
        );
        return r.rows[0].n as number;
      };
      const before = await commits();
      const t0 = Date.now();
      expect(await wa.fetch({ topic: 't-shared', waitMs: 1500 })).toEqual([]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
      const spent = (await commits()) - before;
      // a 5 ms loop commits ~300 times here; idle backends may still flush a few dozen earlier commits late
      expect(spent).toBeLessThan(100);
    } finally {
      await c.end();
    }
    // Project B's own worker still re-acquires it.
    expect((await wb.fetchOne({ topic: 't-shared' })).id).toBe(tb.id);
  });
});
