/**
 * The soak's faults around the engine (issue 14), on top of the worker kills and engine restarts of
 * run.ts: PostgreSQL stopped cleanly and killed -9 (its own server, test/helpers/pg-server.ts), the
 * engines' LISTEN connections terminated, the CRM's answers broken by the MCP fault proxy (503 before the
 * tool runs, 502 after, an answer cut mid-way, a slow one), and one worker partitioned from its engine by
 * a TCP proxy (blackholed, or cut) for longer than its lease.
 */
import pg from 'pg';
import { type McpFaultProxy, startMcpFaultProxy } from '../server/demo/mcp-faults.js';
import type { OwnPostgres } from '../test/helpers/pg-server.js';
import { startTcpProxy, type TcpProxy } from '../test/helpers/proxy.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rnd = (a: number, b: number) => a + Math.random() * (b - a);

/**
 * A pool for the soak's own queries that survives PostgreSQL restarts: a dropped connection is discarded
 * (never an uncaught 'error'), and a query that meets the outage fails like any other.
 */
export function resilientPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {});
  pool.on('connect', (c) => c.on('error', () => {}));
  return pool;
}

/** Retries a soak query through a database outage (bounded). */
export async function query<T extends pg.QueryResultRow>(
  pool: pg.Pool,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<T>> {
  for (let i = 0; ; i++) {
    try {
      return await pool.query<T>(text, values);
    } catch (e) {
      if (i >= 60) throw e;
      await sleep(500);
    }
  }
}

export interface FaultSetup {
  /** the CRM's MCP URL as the definitions must name it (through the fault proxy) */
  mcpUrl: string;
  /** the engine URL the partitioned worker uses */
  partitionedUrl: string;
  faults: SoakFaults;
}

/** Starts the proxies: the MCP fault proxy before the CRM, a TCP link between one worker and `engineUrl`. */
export async function setUpFaults(
  pgs: OwnPostgres,
  crmMcpUrl: string,
  engineUrl: string,
  log: (l: string) => void,
): Promise<FaultSetup> {
  const mcp = await startMcpFaultProxy(crmMcpUrl);
  const link = await startTcpProxy({ port: Number(new URL(engineUrl).port) });
  return { mcpUrl: mcp.url, partitionedUrl: link.url, faults: new SoakFaults(pgs, mcp, link, log) };
}

const MCP_FAULTS: [string, Parameters<McpFaultProxy['inject']>[1]][] = [
  ['get_customer', { fault: 'status', status: 503 }],
  ['create_ticket', { fault: 'status-after', status: 502 }],
  ['create_ticket', { fault: 'drop' }],
  ['refund', { fault: 'drop' }],
  ['get_customer', { fault: 'drop' }],
  ['create_ticket', { fault: 'slow', ms: 1500 }],
  ['refund', { fault: 'status', status: 503 }],
];

export class SoakFaults {
  readonly counts = { pgStops: 0, pgKills: 0, listenerKills: 0, mcpFaults: 0, partitions: 0 };
  private readonly pool: pg.Pool;

  constructor(
    private readonly pgs: OwnPostgres,
    private readonly mcp: McpFaultProxy,
    private readonly link: TcpProxy,
    private readonly log: (l: string) => void,
  ) {
    this.pool = resilientPool(pgs.url);
  }

  /** Runs every fault loop until `until`; PostgreSQL restarts at the given fractions of `span`. */
  async run(o: { t0: number; span: number; until: number; smoke: boolean; lockMs: number }): Promise<void> {
    const restarts = o.smoke
      ? [{ at: 0.8, kill: true }]
      : [
          { at: 0.4, kill: false },
          { at: 0.8, kill: true },
        ];
    const pgLoop = (async () => {
      for (const r of restarts) {
        await sleep(Math.max(0, o.t0 + o.span * r.at - Date.now()));
        await this.restartPostgres(r.kill);
      }
    })();
    const every = (min: number, max: number, fn: (k: number) => Promise<void>) =>
      (async () => {
        for (let k = 0; Date.now() < o.until; k++) {
          await sleep(rnd(min, max));
          if (Date.now() < o.until) await fn(k).catch((e) => this.log(`fault: ${String(e).slice(0, 200)}`));
        }
      })();
    await Promise.all([
      pgLoop,
      every(o.smoke ? 6000 : 15_000, o.smoke ? 12_000 : 30_000, () => this.killListeners()),
      every(2500, 6000, (k) => this.mcpFault(k)),
      every(o.smoke ? 12_000 : 25_000, o.smoke ? 16_000 : 40_000, (k) => this.partition(k, o.lockMs)),
    ]);
    this.mcp.clear();
    this.link.restore();
  }

  private async restartPostgres(kill: boolean) {
    this.log(`PostgreSQL: ${kill ? 'kill -9 of the postmaster' : 'clean stop'}, 1.5 s down`);
    if (kill) await this.pgs.kill9();
    else await this.pgs.stop();
    await sleep(1500);
    await this.pgs.start();
    if (kill) this.counts.pgKills++;
    else this.counts.pgStops++;
    this.log('PostgreSQL: back');
  }

  private async killListeners() {
    const r = await this.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'abada-listener' AND pid <> pg_backend_pid()`,
    );
    this.counts.listenerKills += r.rowCount ?? 0;
  }

  private async mcpFault(k: number) {
    const [tool, rule] = MCP_FAULTS[k % MCP_FAULTS.length];
    this.mcp.inject(tool, { ...rule, times: 1 });
    this.counts.mcpFaults++;
  }

  /** One worker loses its engine for 2.5 leases: blackholed (every other time: connections reset). */
  private async partition(k: number, lockMs: number) {
    const how = k % 2 === 0 ? 'blackhole' : 'cut';
    this.log(`partition: worker 0 ↔ engine A ${how} for ${Math.round(lockMs * 2.5)} ms`);
    if (how === 'blackhole') this.link.blackhole();
    else this.link.cut();
    await sleep(lockMs * 2.5);
    this.link.restore();
    this.counts.partitions++;
  }

  figure(): string {
    const c = this.counts;
    return `PostgreSQL restarts ${c.pgStops + c.pgKills} (kill -9 ${c.pgKills}), LISTEN connections killed ${c.listenerKills}, MCP faults ${c.mcpFaults}, partitions ${c.partitions}`;
  }

  async close() {
    await this.pool.end().catch(() => {});
    await Promise.allSettled([this.mcp.close(), this.link.close()]);
  }
}
