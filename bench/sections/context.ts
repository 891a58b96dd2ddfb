/** What every bench section shares: the run's settings, the result rows, measured rates and a few calls. */
import os from 'node:os';
import { CpuMeter, type CpuUse, type gqlClient, rate } from '../lib.js';

export const SMOKE = process.argv.includes('--smoke');
/** `--history`: only the opt-in history-growth section (bench/sections/history.ts). */
export const HISTORY = process.argv.includes('--history');
export const SECONDS = SMOKE ? 0.4 : Number(process.env.BENCH_SECONDS ?? 4);
export const MS = SECONDS * 1000;
export const BACKLOG_BIG = SMOKE ? 5_000 : Number(process.env.BENCH_BACKLOG ?? 1_000_000);
// BENCH_ONLY=journal,claims runs only those sections (the raw baselines always run; `batch` = journalSteps
// alone; others: tasks, peer, claims, backlog, fanout, inflight, peers — the agent peers, DBOS and LangGraph).
export const ONLY = process.env.BENCH_ONLY?.split(',').map((x) => x.trim());
export const want = (section: string) => !ONLY || ONLY.includes(section);

export const rows: {
  figure: string;
  abada: number;
  baseline: number;
  ratio: number;
  unit: string;
  note?: string;
  /** CPU ms per unit of the figure (per commit, per step, per task claimed) by process group */
  cpuPerUnit?: { engines: number; postgres: number; bench: number };
}[] = [];

// Where the CPU of a measurement went: the engine processes, PostgreSQL (all its processes), this one.
export const cpuOf: { enginePids: number[]; pgDir: string } = { enginePids: [], pgDir: '' };
let lastCpu: (CpuUse & { seconds: number }) | null = null;

/** rate() that also records the CPU every process group used meanwhile (read by row()). */
export async function measuredRate(
  clients: number,
  ms: number,
  op: (client: number, i: number) => Promise<unknown>,
): Promise<number> {
  const meter = new CpuMeter(cpuOf.enginePids, cpuOf.pgDir);
  profileWindow();
  const from = monotonic();
  meter.start();
  const r = await rate(clients, ms, op);
  lastCpu = { ...meter.stop(), seconds: ms / 1000 };
  profileWindow();
  // BENCH_WINDOWS=1: each window's CLOCK_MONOTONIC span on stderr, for `perf report --time <from>,<to>`
  if (process.env.BENCH_WINDOWS === '1')
    console.error(`window ${from},${monotonic()} (${rows.length} rows before)`);
  return r;
}
/** Seconds on CLOCK_MONOTONIC (perf's clock with `-k CLOCK_MONOTONIC`). */
const monotonic = () => (Number(process.hrtime.bigint() / 1000n) / 1e6).toFixed(6);

/** With BENCH_PROFILE_WINDOWS, each engine profiles exactly the measured window (bench/engine-proc.ts). */
export function profileWindow() {
  if (process.env.BENCH_PROFILE_WINDOWS) for (const pid of cpuOf.enginePids) process.kill(pid, 'SIGUSR2');
}

export const results: Record<string, unknown> = {
  smoke: SMOKE,
  seconds: SECONDS,
  at: new Date().toISOString(),
  cpus: os.cpus().length,
};

export function row(figure: string, abada: number, baseline: number, unit: string, note?: string) {
  const c = lastCpu;
  lastCpu = null;
  const units = abada * (c?.seconds ?? 0);
  const cpuPerUnit =
    c && units > 0
      ? { engines: c.engines / units, postgres: c.postgres / units, bench: c.bench / units }
      : undefined;
  rows.push({ figure, abada, baseline, ratio: abada / baseline, unit, note, cpuPerUnit });
}

export const JOURNAL = `mutation($i: JournalStepInput!) { journalStep(input: $i) { taskState } }`;
export const BATCH = `mutation($i: JournalStepsInput!) { journalSteps(input: $i) { taskState } }`;
export const FETCH = `mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) { id attempt } }`;
export const START = `mutation($k: String!, $v: JSON) { startProcess(key: $k, variables: $v) { id } }`;
export const COMPLETE = `mutation($i: CompleteTaskInput!) { completeTask(input: $i) { state } }`;

export type Client = ReturnType<typeof gqlClient>;

export async function startMany(admin: Client, key: string, n: number) {
  for (let i = 0; i < n; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, n - i) }, (_, j) => admin(START, { k: key, v: { n: i + j } })),
    );
  }
}

export async function fetchTasks(worker: Client, workerId: string, n: number, topicName = 'abada:agent') {
  const out: { id: string; attempt: number }[] = [];
  while (out.length < n) {
    const got = (
      await worker(FETCH, {
        i: {
          workerId,
          maxTasks: Math.min(50, n - out.length),
          topics: [{ topicName, lockDurationMs: 3_600_000 }],
        },
      })
    ).fetchAndLock;
    if (got.length === 0) break;
    out.push(...got);
  }
  return out;
}

/** The demo CRM as the bench's definitions bind it (the 002-shaped task's tools). */
export const crmToolServer = (url: string) => `kind: ToolServer
name: crm
transport: streamable-http
url: ${url}
tools:
  get_customer: { policy: read }
  create_ticket: { policy: write, idempotency: key }
  refund: { policy: approval_required, idempotency: key, approvers: [finance] }
`;
