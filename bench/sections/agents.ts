/**
 * Abada's side of the agent peers' comparison (sections/peers.ts): whole agents in one window, as a
 * peer's window holds its whole task. 16 loops, each starting an instance of the 002-shaped process and
 * then running a task as the Agent Worker journals it (the batched shape of sections/tasks.ts: one
 * worker's fetch loop and journal batcher), so the start, the task and the client's side of both are
 * measured together: CPU of the engines and of this process (the client), and PostgreSQL's; commits,
 * rows and WAL bytes from the database's counters (bench/pgstat.ts).
 */
import pg from 'pg';
import { EngineClient } from '../../server/worker/graphql.js';
import { CpuMeter, rate } from '../lib.js';
import { DbCounters } from '../pgstat.js';
import type { AgentWindow } from './comparison.js';
import { type Client, cpuOf, MS, profileWindow, SMOKE, START } from './context.js';
import { printPgStats, resetPgStats } from './report.js';
import { oneTask, SlotFetcher } from './tasks.js';

/** Agents run unmeasured before the first window (connections opened, statements prepared). */
const WARM_UP_MS = SMOKE ? 0 : 1500;

export class AgentWindows {
  private readonly agent: { client: EngineClient; slots: SlotFetcher };
  private n = 0;
  /** fetches that found no task (in the JSON: how often a loop had to ask again) */
  emptyFetches = 0;
  private warm = false;

  constructor(
    private readonly admin: Client,
    private readonly worker: Client,
    /** the bench's database, and a call that makes every connection on it flush its statistics */
    private readonly db: { url: string; flush(): Promise<number> },
  ) {
    this.agent = { client: new EngineClient(worker.url, worker.token), slots: new SlotFetcher(worker) };
  }

  /**
   * One agent on loop `client`: started, then a task taken and journaled. A fetch may come back empty
   * while another loop's start is still committing; the loop fetches again (its own start left a task
   * open), so every start in a window is matched by a task done and the CPU divides by whole agents.
   */
  private async one(client: number): Promise<void> {
    await this.admin(START, { k: 'bench', v: { n: 2_000_000_000 + this.n++ } });
    while ((await oneTask(this.worker, client, 'batched', this.agent)) !== true) this.emptyFetches++;
  }

  async measure(): Promise<AgentWindow> {
    if (!this.warm && WARM_UP_MS > 0) await rate(16, WARM_UP_MS, (c) => this.one(c));
    this.warm = true;
    let agents = 0;
    const meter = new CpuMeter(cpuOf.enginePids, cpuOf.pgDir);
    const observer = await DbCounters.open(this.db.url);
    // BENCH_PG_STATS=1: PostgreSQL's statement figures of the window, per agent (reset before counting)
    const stats = new pg.Pool({ connectionString: this.db.url, max: 1 });
    try {
      const pgStats = await resetPgStats(stats);
      await this.db.flush();
      const { result: cpu, counts } = await observer.around(async () => {
        meter.start();
        profileWindow();
        await rate(16, MS, async (c) => {
          await this.one(c);
          agents++;
        });
        const result = meter.stop();
        profileWindow();
        return { result, units: agents, flushed: await this.db.flush() };
      });
      if (pgStats) await printPgStats(stats, { title: 'whole agents', units: agents, unit: 'agent' });
      const per = (ms: number) => ms / agents;
      return {
        agents,
        cpuMsPerAgent: {
          process: per(cpu.engines + cpu.bench),
          engines: per(cpu.engines),
          client: per(cpu.bench),
          postgres: per(cpu.postgres),
          total: per(cpu.engines + cpu.bench + cpu.postgres),
        },
        counts,
      };
    } finally {
      await Promise.all([observer.close(), stats.end()]);
    }
  }
}
