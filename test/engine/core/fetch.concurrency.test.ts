/**
 * fetchAndLock under contention and long polling (SPEC §3): 10 concurrent fetchers over 500 tasks each
 * get disjoint tasks, every task is leased exactly once (one TASK_LEASED history row); a long poll is
 * woken by NOTIFY when work arrives and returns [] at its timeout when none does.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { parkedPoll } from '../../helpers/wait.js';
import { serviceProcess } from './helpers.js';

let engine: TestEngine;
/** The long poll's wait in the wake-up test: far above any answer time, so a missed wake-up shows. */
const POLL_MS = 20_000;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: [serviceProcess('load', 't-load'), serviceProcess('poll', 't-poll')].join('---'),
  });
});
afterAll(() => engine?.close());

describe('fetchAndLock', () => {
  it('10 concurrent fetchers over 500 tasks: each task leased exactly once', async () => {
    const N = 500;
    for (let i = 0; i < N; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          engine.ok(engine.adminToken, Q.start, { key: 'load', v: { n: i + j } }),
        ),
      );
    }
    const tokens = await Promise.all(
      Array.from({ length: 5 }, (_, i) => engine.principal('WORKER', `fleet-${i}`, { topics: ['t-load'] })),
    );
    const workers = Array.from(
      { length: 10 },
      (_, i) => new WorkerSim(engine, tokens[i % 5], `fleet-w-${i}`),
    );
    const got: string[][] = workers.map(() => []);
    await Promise.all(
      workers.map(async (w, i) => {
        for (let round = 0; ; round++) {
          const tasks = await w.fetch({ topic: 't-load', maxTasks: 1 + ((i + round) % 5), lockMs: 60_000 });
          if (tasks.length === 0) return;
          got[i].push(...tasks.map((t) => t.id));
          // half of the fleet completes as it goes (the instance moves on, writing history concurrently)
          if (i % 2 === 0) await Promise.all(tasks.map((t) => w.complete(t, { done: true })));
        }
      }),
    );
    const all = got.flat();
    expect(all).toHaveLength(N);
    expect(new Set(all).size).toBe(N);
    expect(got.filter((g) => g.length > 0).length).toBeGreaterThan(1);

    const c = new pg.Client({ connectionString: engine.databaseUrl });
    await c.connect();
    try {
      const { rows } = await c.query(
        `SELECT t.id, count(h.*) FILTER (WHERE h.event_type = 'TASK_LEASED')::int AS leased,
                count(h.*) FILTER (WHERE h.event_type = 'TASK_LEASE_REACQUIRED')::int AS reacquired
         FROM external_tasks t LEFT JOIN history_events h ON h.task_id = t.id
         WHERE t.topic_name = 't-load' GROUP BY t.id`,
      );
      expect(rows).toHaveLength(N);
      expect(rows.filter((r) => r.leased !== 1 || r.reacquired !== 0)).toEqual([]);
      const byState = await c.query(
        `SELECT state, count(*)::int AS n FROM external_tasks WHERE topic_name = 't-load' GROUP BY state ORDER BY state`,
      );
      const completed = got.filter((_, i) => i % 2 === 0).flat().length;
      expect(byState.rows).toEqual(
        [
          completed ? { state: 'COMPLETED', n: completed } : null,
          N - completed ? { state: 'LEASED', n: N - completed } : null,
        ].filter(Boolean),
      );
    } finally {
      await c.end();
    }
  });

  it('a long poll is woken by NOTIFY when work arrives', async () => {
    const token = await engine.principal('WORKER', 'poller', { topics: ['t-poll'] });
    const w = new WorkerSim(engine, token, 'poller-1');
    const polling = await parkedPoll(engine.context.notifier, () =>
      w.fetch({ topic: 't-poll', waitMs: POLL_MS }),
    );
    const startedAt = Date.now();
    const started = await engine.ok(engine.adminToken, Q.start, { key: 'poll', v: { n: 1 } });
    const tasks = await polling.result;
    expect(tasks).toHaveLength(1);
    expect(tasks[0].processInstanceId).toBe(started.startProcess.id);
    // Woken, not timed out: a woken poll answers within milliseconds, one that missed the NOTIFY only at
    // POLL_MS (when its last look would find the task too). Half of it tells the two apart on any load.
    expect(Date.now() - startedAt).toBeLessThan(POLL_MS / 2);
  });

  it('a long poll with nothing to do returns [] at its timeout', async () => {
    const token = await engine.principal('WORKER', 'idle', { topics: ['t-poll'] });
    const w = new WorkerSim(engine, token, 'idle-1');
    const t0 = Date.now();
    expect(await w.fetch({ topic: 't-poll', waitMs: 1500 })).toEqual([]);
    // Not before its timeout (timers never fire early; 100 ms for the clocks' granularity). A poll that
    // never returns fails on the test's own timeout: no upper bound here for a loaded machine to break.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
  });
});
