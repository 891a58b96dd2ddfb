/** 3. Claim throughput and 4. fetch latency under a small and a huge backlog. */
import type pg from 'pg';
import { summarize } from '../lib.js';
import { seedOpenTasks } from '../seed.js';
import { rawClaimRate } from './raw.js';
import { BACKLOG_BIG, type Client, FETCH, MS, measuredRate, results, row, rows, SMOKE } from './context.js';

/** 3. fetchAndLock with maxTasks 1 and 50 (4 clients) against the raw claim statement. */
export async function claimThroughput(pool: pg.Pool, worker: Client) {
  await seedOpenTasks(pool, 'claim', SMOKE ? 5_000 : 200_000);
  for (const max of [1, 50]) {
    const raw = await rawClaimRate(pool); // the baseline right before its figure (raw.ts)
    let claimed = 0;
    const t0 = performance.now();
    await measuredRate(4, MS, async (client) => {
      const got = (
        await worker(FETCH, {
          i: {
            workerId: `claim-${client}`,
            maxTasks: max,
            topics: [{ topicName: 'claim', lockDurationMs: 3_600_000 }],
          },
        })
      ).fetchAndLock;
      claimed += got.length;
    });
    const perSec = claimed / ((performance.now() - t0) / 1000);
    row(
      `fetchAndLock maxTasks ${max}, tasks claimed/s`,
      perSec,
      raw,
      'tasks/s',
      'raw: one claim statement, 4 clients, measured just before',
    );
  }
}

/** 4. Fetch latency with a steady small vs huge backlog, completing what is fetched (dead tuples pile up). */
export async function backlog(pool: pg.Pool, worker: Client) {
  const measure = async (label: string) => {
    const lat: number[] = [];
    const perSecond: number[] = [];
    const until = Date.now() + MS * 2;
    let bucketStart = Date.now();
    let bucket: number[] = [];
    while (Date.now() < until) {
      const t0 = performance.now();
      const got = (
        await worker(FETCH, {
          i: { workerId: 'backlog', maxTasks: 1, topics: [{ topicName: 'backlog', lockDurationMs: 60_000 }] },
        })
      ).fetchAndLock;
      const ms = performance.now() - t0;
      lat.push(ms);
      bucket.push(ms);
      if (got[0]) {
        await pool.query(`UPDATE external_tasks SET state = 'COMPLETED', ended_at = now() WHERE id = $1`, [
          got[0].id,
        ]);
        // a steady backlog: each task taken is replaced, so the 1k case never runs dry (an empty fetch
        // is cheaper and would flatter the small backlog)
        await seedOpenTasks(pool, 'backlog', 1, { vacuum: false });
      }
      if (Date.now() - bucketStart >= 1000) {
        perSecond.push(summarize(bucket).p50);
        bucket = [];
        bucketStart = Date.now();
      }
    }
    return { label, ...summarize(lat), p50PerSecond: perSecond };
  };
  // Both cases start from a settled database (statistics fresh, no dirty pages left by the bulk seed to
  // be written out by the fetches themselves): a backlog that grew over days is in that state.
  const settle = async () => {
    await pool.query('ANALYZE external_tasks, process_instances, history_heads');
    await pool.query('CHECKPOINT');
  };
  await seedOpenTasks(pool, 'backlog', 1_000);
  await settle();
  const small = await measure('1k');
  await seedOpenTasks(pool, 'backlog', BACKLOG_BIG - 1_000);
  await settle();
  const big = await measure(`${BACKLOG_BIG}`);
  results.backlog = { small, big };
  rows.push({
    figure: `fetch p50 ms, backlog ${BACKLOG_BIG} vs 1k`,
    abada: big.p50,
    baseline: small.p50,
    ratio: big.p50 / small.p50,
    unit: 'ms',
    note: `p99 ${big.p99.toFixed(1)} vs ${small.p99.toFixed(1)}`,
  });
}
