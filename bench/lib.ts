/** Small helpers for the bench: timing loops, percentiles, engine child processes, a GraphQL client. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? Number.NaN };
}

/** Runs `clients` loops of `op` for `ms` milliseconds; returns operations per second. */
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
        await op(c, i++);
        count++;
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

export interface EngineProc {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function spawnEngine(env: Record<string, string>): Promise<EngineProc> {
  // BENCH_CPU_PROF=<dir>: each engine writes a V8 CPU profile there when it stops (open in Chrome DevTools).
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', 'bench/engine-proc.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export function gqlClient(url: string, token: string) {
  return async <T = any>(query: string, variables?: Record<string, unknown>): Promise<T> => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data: T; errors?: unknown[] };
    if (body.errors?.length) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
}

export function wsClient(url: string, token: string) {
  return createClient({
    url: `${url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false,
    retryAttempts: 0,
  });
}

/** CPU (user+system ms) and RSS (MB) of a process, read from /proc. */
export async function procStats(pid: number): Promise<{ cpuMs: number; rssMb: number }> {
  const { readFile } = await import('node:fs/promises');
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  const ticks = Number(stat[11]) + Number(stat[12]);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { cpuMs: ticks * 10, rssMb: rssKb / 1024 };
}
