/** Small helpers for the bench: timing loops, percentiles, engine child processes, a GraphQL client. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createClient, GraphQLRequestError, wsClient as sharedWsClient } from '../server/client/index.js';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? Number.NaN };
}

/**
 * Runs `clients` loops of `op` for `ms` milliseconds; returns operations per second. An `op` that
 * resolves to `false` found no work left: it is not counted, and its loop idles to the window's end (so
 * the window keeps its length, and the CPU measured over it is divided by whole operations only).
 */
export async function rate(
  clients: number,
  ms: number,
  op: (client: number, i: number) => Promise<unknown>,
): Promise<number> {
  const until = Date.now() + ms;
  let count = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      let i = 0;
      while (Date.now() < until) {
        if ((await op(c, i++)) === false) {
          await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())));
          break;
        }
        count++;
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

export interface EngineProc {
  url: string;
  child: ChildProcess;
  /** every connection of the engine's pool reports its pending statistics (bench/pgstat.ts); its commits */
  flushStats(): Promise<number>;
  stop(): Promise<void>;
}

export async function spawnEngine(env: Record<string, string>): Promise<EngineProc> {
  // BENCH_CPU_PROF=<dir>: each engine writes a V8 CPU profile there when it stops (open in Chrome DevTools).
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  // BENCH_ENGINE_FLAGS: node flags for the engine processes only (e.g. a V8 heap setting to compare)
  const flags = process.env.BENCH_ENGINE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...prof, ...flags, '--import', 'tsx', 'bench/engine-proc.ts'], {
    env: { ...process.env, ...env },
    // the IPC channel carries the bench's requests to flush statistics (bench/engine-proc.ts)
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  // unreferenced: the channel alone keeps neither process alive, as before it existed
  child.channel?.unref();
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += String(d);
      const m = /READY (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`engine exited ${code}`)));
  });
  return {
    url,
    child,
    flushStats: () =>
      new Promise<number>((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`engine exited ${code} while flushing`));
        child.once('exit', onExit);
        child.once('message', (m: { kind: string; commits: number }) => {
          child.off('exit', onExit);
          resolve(m.commits);
        });
        child.send({ kind: 'flushStats' });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The bench's GraphQL calls go through the shared client (server/client: node:http with keep-alive, as
 * the load generator shares the machine's two cores with the engines and PostgreSQL); no timeout. A
 * refusal rejects with the response's errors as JSON in the message (codes included), as callers match.
 */
export function gqlClient(url: string, token: string) {
  const client = createClient({ url, token, timeoutMs: 0 });
  // biome-ignore lint/suspicious/noExplicitAny: the bench's documents are untyped strings
  const send = async <T = any>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    try {
      return await client.request<T>(query, variables);
    } catch (e) {
      if (e instanceof GraphQLRequestError) throw new Error(JSON.stringify(e.errors), { cause: e });
      throw e;
    }
  };
  // where and as whom it sends: for the Agent Worker's own client (the tasks section)
  return Object.assign(send, { url, token });
}

export function wsClient(url: string, token: string) {
  return sharedWsClient(url, token, { lazy: false, retryAttempts: 0 });
}

/** CPU (user+system ms) and RSS (MB) of a process, read from /proc. */
export async function procStats(pid: number): Promise<{ cpuMs: number; rssMb: number }> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { cpuMs: ticksOf(pid)?.ms ?? 0, rssMb: rssKb / 1024 };
}

/** CPU ms used by the engines, by PostgreSQL (every backend and helper process) and by this process. */
export interface CpuUse {
  engines: number;
  postgres: number;
  bench: number;
}

function ticksOf(pid: number): { ppid: number; ms: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { ppid: Number(stat[1]), ms: (Number(stat[11]) + Number(stat[12])) * 10 };
  } catch {
    return null; // ended meanwhile
  }
}

/**
 * Measures CPU over an interval by sampling /proc every 250 ms: PostgreSQL's processes come and go
 * (connections, autovacuum workers), so each process counts from when it was first seen (from zero if
 * it started during the interval) to its last sample. A process that ends loses at most its last 250 ms.
 * (The bench's own CPU includes the sampling, about 1 ms per sample.)
 */
export class CpuMeter {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private benchStart = process.cpuUsage();
  private enginesStart = 0;

  constructor(
    private readonly enginePids: number[],
    private readonly pgDataDir: string,
  ) {}

  /** Synchronous reads: a few hundred small /proc files per sample, cheaper than as many promises. */
  private postgresPids(): number[] {
    const postmaster = Number(readFileSync(`${this.pgDataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
    const pids = [postmaster];
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (Number.isInteger(pid) && ticksOf(pid)?.ppid === postmaster) pids.push(pid);
    }
    return pids;
  }

  private sample(initial: boolean) {
    for (const pid of this.postgresPids()) {
      const t = ticksOf(pid);
      if (!t) continue;
      if (!this.first.has(pid)) this.first.set(pid, initial ? t.ms : 0);
      this.last.set(pid, t.ms);
    }
  }

  private enginesMs() {
    let ms = 0;
    for (const pid of this.enginePids) ms += ticksOf(pid)?.ms ?? 0;
    return ms;
  }

  start() {
    this.sample(true);
    this.enginesStart = this.enginesMs();
    this.benchStart = process.cpuUsage();
    this.timer = setInterval(() => this.sample(false), 250);
  }

  stop(): CpuUse {
    if (this.timer) clearInterval(this.timer);
    const bench = process.cpuUsage(this.benchStart);
    const engines = this.enginesMs() - this.enginesStart;
    this.sample(false);
    let postgres = 0;
    for (const [pid, last] of this.last) postgres += last - (this.first.get(pid) ?? 0);
    return { engines, postgres, bench: (bench.user + bench.system) / 1000 };
  }
}
