/**
 * The peer in the same run: graphile-worker (the queue a user would pick instead) on the same database
 * adds and completes as many jobs as Abada ran 002-shaped tasks, unbatched (one `add_job` per job, one
 * completion per job) and batched (`addJobs` in fifties, a local queue of 50, completions batched).
 * graphile-worker is a library, so it runs in this process: its CPU is the bench's, next to PostgreSQL's.
 * The unit differs on purpose: a job is added and completed (2 commits, no audit), an Abada task is
 * fetched, journaled and completed with its history — the ratio says what the durability costs.
 */
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import { CpuMeter } from '../lib.js';
import { cpuOf, results, SMOKE } from './context.js';

export interface PeerResult {
  mode: 'unbatched' | 'batched';
  jobs: number;
  jobsPerSec: number;
  /** CPU ms per job: PostgreSQL, and this process (graphile-worker adding and running jobs) */
  cpuPerJob: { postgres: number; library: number };
}

const quiet = new Logger(() => () => {});
const CLIENTS = 16;

/** Adds and completes `jobs` no-op jobs each way; `url` is the bench's database. */
export async function graphileWorkerPeer(url: string, jobs: number): Promise<PeerResult[]> {
  const utils = await makeWorkerUtils({ connectionString: url, logger: quiet });
  const out: PeerResult[] = [];
  try {
    await utils.migrate();
    for (const mode of ['unbatched', 'batched'] as const) out.push(await once(url, utils, mode, jobs));
  } finally {
    await utils.release();
  }
  results.peer = out;
  return out;
}

async function once(
  url: string,
  utils: Awaited<ReturnType<typeof makeWorkerUtils>>,
  mode: PeerResult['mode'],
  jobs: number,
): Promise<PeerResult> {
  const batched = mode === 'batched';
  let done = 0;
  let allDone: () => void = () => {};
  const finished = new Promise<void>((r) => {
    allDone = r;
  });
  const meter = new CpuMeter([], cpuOf.pgDir);
  meter.start();
  const t0 = performance.now();
  const runner = await run({
    connectionString: url,
    concurrency: CLIENTS,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: quiet,
    preset: batched ? { worker: { localQueue: { size: 50 }, completeJobBatchDelay: 0 } } : {},
    taskList: {
      noop: async () => {
        if (++done === jobs) allDone();
      },
    },
  } as Parameters<typeof run>[0]);
  // the jobs are added while the worker runs, by 16 clients as Abada's tasks were driven
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const mine = Math.floor(jobs / CLIENTS) + (c < jobs % CLIENTS ? 1 : 0);
      if (batched) {
        for (let i = 0; i < mine; i += 50)
          await utils.addJobs(
            Array.from({ length: Math.min(50, mine - i) }, (_, k) => ({
              identifier: 'noop',
              payload: { c, i: i + k },
            })),
          );
      } else for (let i = 0; i < mine; i++) await utils.addJob('noop', { c, i });
    }),
  );
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = meter.stop();
  await runner.stop();
  return {
    mode,
    jobs,
    jobsPerSec: jobs / seconds,
    cpuPerJob: { postgres: cpu.postgres / jobs, library: cpu.bench / jobs },
  };
}

/** How many jobs: as many as Abada's 002-shaped tasks (as the worker journals them) in this run. */
export function peerJobs(): number {
  const n = results.pairedTasks as number | undefined;
  return Math.max(SMOKE ? 50 : 500, Math.round(n ?? 2000));
}
