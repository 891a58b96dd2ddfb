/**
 * Agents in flight, end to end: the project's Agent Worker processes run 002-shaped tasks (model →
 * get_customer → model → create_ticket → model) against the demo CRM (50 ms per tool call) and the
 * scripted model server (1,000 ms per answer), N tasks in flight. Measured: tasks/s against the ideal
 * (N ÷ the doubles' time per task), the engine-added latency per step (a double's answer leaving → the
 * same task's next request reaching a double: worker, journaling and engine included), RSS, and CPU per
 * task by process group. The doubles run in this process; on 2 cores they share the machine with the
 * engines, PostgreSQL and the workers, so the per-core figure of `tasks` is the headline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type pg from 'pg';
import { type CrmServer, startCrmServer } from '../../server/demo/crm-server.js';
import { type ModelServer, startModelServer } from '../../server/demo/model-server.js';
import { supportTriageScript, userInput } from '../../server/demo/scripts.js';
import { CpuMeter, procStats, summarize } from '../lib.js';
import { type Client, cpuOf, crmToolServer, results, SMOKE } from './context.js';

const MODEL_MS = SMOKE ? 20 : Number(process.env.BENCH_MODEL_MS ?? 1000);
const TOOL_MS = SMOKE ? 5 : Number(process.env.BENCH_TOOL_MS ?? 50);
const WINDOW_MS = SMOKE ? 1500 : Number(process.env.BENCH_INFLIGHT_SECONDS ?? 20) * 1000;
const IN_FLIGHT = SMOKE ? [4] : [100, 300];
/** the doubles' time per task: 3 model answers and 2 tool calls */
const IDEAL_TASK_MS = 3 * MODEL_MS + 2 * TOOL_MS;

const definitions = (crmUrl: string) => `${crmToolServer(crmUrl)}---
kind: Process
key: inflight
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gpt-4.1-mini
    prompt: Read the message from \${customerId}, look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [crm/get_customer, crm/create_ticket]
    result_variable: triage
    output_schema: { type: object, required: [ticketId, priority] }
    next: done
  - { id: done, type: end }
`;

export interface InFlightResult {
  inFlight: number;
  workers: number;
  /** tasks completed by the end of the window, warm-up included (at least min(N, 10)) */
  completedTotal: number;
  tasksPerSec: number;
  idealTasksPerSec: number;
  ratio: number;
  /** engine-added latency per step, ms; and split by what the step sends next (a tool call or a model call) */
  stepGap: { n: number; p50: number; p99: number; max: number };
  stepGapBefore: Record<'tool' | 'model', { n: number; p50: number; p99: number; max: number }>;
  workerRssMb: number[];
  engineRssMb: number[];
  /** CPU ms per completed task by process group (doubles = this process) */
  cpuPerTask: { engines: number; postgres: number; workers: number; doubles: number };
  /** how the workers' journal calls reached the engine in the window (its /metrics): calls per request */
  journalCallsPerRequest: number;
}

/** Runs the in-flight measurement at each N; `engineUrl` is engine A, `adminToken` its admin. */
export async function agentsInFlight(pool: pg.Pool, admin: Client, engineUrl: string) {
  const crm = await startCrmServer({ latencyMs: TOOL_MS, overRefunds: 'allow' });
  const model = await startModelServer({ script: supportTriageScript, latencyMs: MODEL_MS });
  const out: InFlightResult[] = [];
  try {
    await admin(`mutation($s: String!) { deploy(source: $s) { definitions { id } } }`, {
      s: definitions(crm.url),
    });
    const token = (
      await admin(
        `mutation { createPrincipal(input: {kind: WORKER, name: "inflight-worker", topics: ["abada:agent"]}) { token } }`,
      )
    ).createPrincipal.token as string;
    for (const n of IN_FLIGHT) {
      // the other sections' agent tasks (no real tool server behind them) must not reach these workers
      await retireAgentTasks(pool);
      out.push(await measureAt(n, { pool, admin, engineUrl, token, crm, model }));
    }
  } finally {
    await retireAgentTasks(pool);
    await Promise.all([crm.close(), model.close()]);
  }
  results.inFlight = out;
  results.modelMs = MODEL_MS;
  results.toolMs = TOOL_MS;
  return out;
}

async function retireAgentTasks(pool: pg.Pool) {
  await pool.query(
    `UPDATE external_tasks SET state = 'CANCELLED', ended_at = now()
     WHERE topic_name = 'abada:agent' AND state IN ('OPEN', 'LEASED')`,
  );
}

interface Setup {
  pool: pg.Pool;
  admin: Client;
  engineUrl: string;
  token: string;
  crm: CrmServer;
  model: ModelServer;
}

async function measureAt(n: number, s: Setup): Promise<InFlightResult> {
  const ideal = n / (IDEAL_TASK_MS / 1000);
  // enough work for the warm-up and the window at the ideal rate, and a margin
  const instances = Math.ceil(n + ideal * ((WINDOW_MS + 2 * IDEAL_TASK_MS) / 1000) * 1.1);
  await startInstances(s, n, instances);
  const perWorker = Math.min(100, n);
  const workers = Array.from({ length: Math.ceil(n / perWorker) }, (_, i) =>
    spawnWorker(`inflight-${n}-${i}`, s, perWorker),
  );
  try {
    // warm-up: every worker has started and its first tasks have gone round once
    await waitFor(async () => (await completed(s.pool)) >= Math.min(n, 10), 60_000);
    await new Promise((r) => setTimeout(r, IDEAL_TASK_MS));
    const meter = new CpuMeter(cpuOf.enginePids, cpuOf.pgDir);
    const workerCpu0 = await Promise.all(workers.map((w) => procStats(w.pid!)));
    const before = await completed(s.pool);
    const journal0 = await journalTraffic(s.engineUrl);
    const t0 = performance.timeOrigin + performance.now();
    meter.start();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const cpu = meter.stop();
    const t1 = performance.timeOrigin + performance.now();
    const completedTotal = await completed(s.pool);
    const journal1 = await journalTraffic(s.engineUrl);
    const done = completedTotal - before;
    const workerStats = await Promise.all(workers.map((w) => procStats(w.pid!)));
    const engineStats = await Promise.all(cpuOf.enginePids.map((pid) => procStats(pid)));
    const workersMs = workerStats.reduce((a, w, i) => a + w.cpuMs - workerCpu0[i].cpuMs, 0);
    const per = (ms: number) => (done > 0 ? ms / done : Number.NaN);
    const tasksPerSec = done / ((t1 - t0) / 1000);
    const gaps = stepGaps(s, t0, t1);
    return {
      inFlight: n,
      workers: workers.length,
      completedTotal,
      tasksPerSec,
      idealTasksPerSec: ideal,
      ratio: tasksPerSec / ideal,
      stepGap: summarize(gaps.map((g) => g.ms)),
      stepGapBefore: {
        tool: summarize(gaps.filter((g) => g.next === 'tool').map((g) => g.ms)),
        model: summarize(gaps.filter((g) => g.next === 'model').map((g) => g.ms)),
      },
      workerRssMb: workerStats.map((w) => w.rssMb),
      engineRssMb: engineStats.map((e) => e.rssMb),
      cpuPerTask: {
        engines: per(cpu.engines),
        postgres: per(cpu.postgres),
        workers: per(workersMs),
        doubles: per(cpu.bench),
      },
      journalCallsPerRequest: callsPerRequest(journal0, journal1),
    };
  } finally {
    // a profiled worker must stop on its own to write its profile (SIGTERM, then at most 5 s)
    if (process.env.BENCH_WORKER_PROF)
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((done) => {
              const t = setTimeout(done, 5000);
              w.once('exit', () => {
                clearTimeout(t);
                done();
              });
              w.kill('SIGTERM');
            }),
        ),
      );
    for (const w of workers) w.kill('SIGKILL');
    s.crm.reset();
    s.model.reset();
  }
}

/** Starts `count` instances, each with its own customer (the key that ties a task's calls together). */
async function startInstances(s: Setup, n: number, count: number) {
  for (let i = 0; i < count; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, count - i) }, (_, j) => {
        const customerId = `B-${n}-${i + j}`;
        s.crm.addCustomer({
          customerId,
          name: `Customer ${customerId}`,
          email: `${customerId}@example.com`,
          tier: 'silver',
          orders: [],
        });
        return s.admin(`mutation($k: String!, $v: JSON) { startProcess(key: $k, variables: $v) { id } }`, {
          k: 'inflight',
          v: { customerId, message: 'My parcel never arrived.' },
        });
      }),
    );
  }
}

const completed = async (pool: pg.Pool) =>
  Number(
    (
      await pool.query(
        `SELECT count(*)::int AS n FROM process_instances WHERE key = 'inflight' AND state = 'COMPLETED'`,
      )
    ).rows[0].n,
  );

async function waitFor(ok: () => Promise<boolean>, ms: number) {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(`in-flight bench: no task completed within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The engine-added latency of each step that started in the window: for each task (its customer), a
 * double's answer leaving → the next request of the same task reaching a double.
 */
type Exchange = { kind: 'tool' | 'model'; receivedMs: number; answeredMs?: number };

function stepGaps(s: Setup, t0: number, t1: number): { next: 'tool' | 'model'; ms: number }[] {
  const byTask = new Map<string, Exchange[]>();
  const add = (key: unknown, e: Exchange) => {
    if (typeof key !== 'string') return;
    const list = byTask.get(key) ?? [];
    list.push(e);
    byTask.set(key, list);
  };
  for (const c of s.model.calls) add(userInput(c.messages, 'customerId'), { ...c, kind: 'model' });
  for (const c of s.crm.calls) add(c.args.customerId, { ...c, kind: 'tool' });
  const gaps: { next: 'tool' | 'model'; ms: number }[] = [];
  for (const events of byTask.values()) {
    events.sort((a, b) => a.receivedMs - b.receivedMs);
    for (let i = 1; i < events.length; i++) {
      const prev = events[i - 1].answeredMs;
      const next = events[i].receivedMs;
      if (prev !== undefined && next >= t0 && next <= t1)
        gaps.push({ next: events[i].kind, ms: next - prev });
    }
  }
  return gaps;
}

function spawnWorker(id: string, s: Setup, concurrency: number): ChildProcess {
  // BENCH_WORKER_PROF=<dir>: each Agent Worker writes a V8 CPU profile there when it stops
  const prof = process.env.BENCH_WORKER_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROF}`]
    : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', 'server/worker/main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ABADA_URL: s.engineUrl,
      ABADA_TOKEN: s.token,
      ABADA_WORKER_ID: id,
      ABADA_WORKER_CONCURRENCY: String(concurrency),
      ABADA_WORKER_POLL_MS: '5000',
      ABADA_MODEL_BASE_URL: s.model.url,
      ABADA_MODEL_API_KEY: 'bench-key',
      ABADA_LOG_LEVEL: 'warn',
    } as unknown as NodeJS.ProcessEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

/** The engine's journal counters (/metrics): calls committed, journalBatch requests and their entries. */
async function journalTraffic(
  engineUrl: string,
): Promise<{ calls: number; batches: number; entries: number }> {
  const body = await (await fetch(`${engineUrl}/metrics`)).text();
  const sum = (name: string) =>
    [...body.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'gm'))].reduce(
      (a, m) => a + Number(m[1]),
      0,
    );
  return {
    calls: sum('abada_journal_calls_total'),
    batches: sum('abada_journal_batches_total'),
    entries: sum('abada_journal_batch_entries_total'),
  };
}

/** Journal calls per request in a window: a batch is one request for its entries, any other call one. */
function callsPerRequest(
  a: { calls: number; batches: number; entries: number },
  b: { calls: number; batches: number; entries: number },
): number {
  const calls = b.calls - a.calls;
  const requests = calls - (b.entries - a.entries) + (b.batches - a.batches);
  return requests > 0 ? calls / requests : Number.NaN;
}
