/**
 * `npm run bench`: in ONE run, a raw baseline with `pg` on the same database, then Abada through GraphQL,
 * printed as figures and ratios (and written to bench/results/<time>.json). Loopback only, bounded in
 * time. `--smoke` runs every section tiny (used by `npm test`, which asserts only that it works).
 */
import { mkdirSync, mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../server/db/client.js';
import { runMigrations } from '../server/db/migrate.js';
import { CpuMeter, type CpuUse, type EngineProc, gqlClient, rate, spawnEngine, summarize } from './lib.js';
import { fanOut } from './fanout.js';
import { seedOpenTasks } from './seed.js';

const SMOKE = process.argv.includes('--smoke');
const SECONDS = SMOKE ? 0.4 : Number(process.env.BENCH_SECONDS ?? 4);
const MS = SECONDS * 1000;
const BACKLOG_BIG = SMOKE ? 5_000 : Number(process.env.BENCH_BACKLOG ?? 1_000_000);
const ADMIN = 'bench-admin-token';
// BENCH_ONLY=journal,claims runs only those sections (the raw baselines always run; `batch` = journalSteps alone).
const ONLY = process.env.BENCH_ONLY?.split(',').map((x) => x.trim());
const want = (section: string) => !ONLY || ONLY.includes(section);
const KEY = Buffer.alloc(32, 7).toString('base64');

const PROCESS = `
kind: ToolServer
name: crm
transport: streamable-http
url: http://127.0.0.1:9/mcp
tools:
  get_customer: { policy: read }
  create_ticket: { policy: write, idempotency: key }
  refund: { policy: approval_required, idempotency: key, approvers: [finance] }
---
kind: Process
key: bench
variables: { n: { type: integer } }
start: agent
nodes:
  - id: agent
    type: agent
    model: gpt-4.1-mini
    prompt: bench
    tools: [crm/get_customer, crm/create_ticket, crm/refund]
    result_variable: out
    next: done
  - { id: done, type: end }
---
kind: Process
key: claim
start: work
nodes:
  - { id: work, type: service, topic: claim, next: done }
  - { id: done, type: end }
`;

const rows: {
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
const cpuOf: { enginePids: number[]; pgDir: string } = { enginePids: [], pgDir: '' };
let lastCpu: (CpuUse & { seconds: number }) | null = null;

/** rate() that also records the CPU every process group used meanwhile (read by row()). */
async function measuredRate(
  clients: number,
  ms: number,
  op: (client: number, i: number) => Promise<unknown>,
): Promise<number> {
  const meter = new CpuMeter(cpuOf.enginePids, cpuOf.pgDir);
  meter.start();
  const r = await rate(clients, ms, op);
  lastCpu = { ...meter.stop(), seconds: ms / 1000 };
  return r;
}
const results: Record<string, unknown> = {
  smoke: SMOKE,
  seconds: SECONDS,
  at: new Date().toISOString(),
  cpus: os.cpus().length,
};

function row(figure: string, abada: number, baseline: number, unit: string, note?: string) {
  const c = lastCpu;
  lastCpu = null;
  const units = abada * (c?.seconds ?? 0);
  const cpuPerUnit =
    c && units > 0
      ? { engines: c.engines / units, postgres: c.postgres / units, bench: c.bench / units }
      : undefined;
  rows.push({ figure, abada, baseline, ratio: abada / baseline, unit, note, cpuPerUnit });
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'abada-bench-'));
  chmodSync(dir, 0o755);
  // BENCH_PG_STATS=1: PostgreSQL's own view of where its time went (pg_stat_statements), printed at the end.
  const pgStats = process.env.BENCH_PG_STATS === '1';
  // BENCH_EXPLAIN=<ms>: PostgreSQL logs the plan of every statement slower than that (auto_explain).
  const explainMs = process.env.BENCH_EXPLAIN;
  const pgServer = await startEmbeddedPostgres(path.join(dir, 'pg'), {
    log: explainMs ? (line) => process.stderr.write(`${line}\n`) : undefined,
    flags: explainMs
      ? ['-c', 'shared_preload_libraries=auto_explain', '-c', `auto_explain.log_min_duration=${explainMs}`]
      : pgStats
        ? [
            '-c',
            'shared_preload_libraries=pg_stat_statements',
            '-c',
            'pg_stat_statements.track=all',
            '-c',
            'pg_stat_statements.track_planning=on',
            '-c',
            'track_functions=all',
          ]
        : [],
  });
  const url = pgServer.url;
  cpuOf.pgDir = path.join(dir, 'pg');
  await runMigrations(url);
  const pool = new pg.Pool({ connectionString: url, max: 40 });
  // an idle connection that fails is replaced by the pool; say so instead of dying on the event
  pool.on('error', (e) => console.error(`bench pool: idle connection failed: ${e.message}`));
  if (pgStats) await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const engines: EngineProc[] = [];
  try {
    await rawBaselines(pool);
    const env = {
      DATABASE_URL: url,
      ABADA_ENCRYPTION_KEY: KEY,
      ABADA_ADMIN_TOKEN: ADMIN,
      ABADA_HEARTBEAT_DEBOUNCE_MS: '5000',
      HOST: '127.0.0.1',
    };
    engines.push(await spawnEngine(env));
    engines.push(await spawnEngine(env));
    cpuOf.enginePids = engines.map((e) => e.child.pid!);
    const [a] = engines;
    const admin = gqlClient(a.url, ADMIN);
    await admin(`mutation($s: String!) { deploy(source: $s) { definitions { id } } }`, { s: PROCESS });
    const workerToken = (
      await admin(
        `mutation { createPrincipal(input: {kind: WORKER, name: "bench-worker", topics: ["abada:agent", "claim", "backlog"]}) { token } }`,
      )
    ).createPrincipal.token as string;
    const worker = gqlClient(a.url, workerToken);
    if (want('journal') || want('batch')) await journalThroughput(pool, admin, worker);
    if (want('tasks')) await taskThroughput(pool, admin, worker);
    if (want('claims')) await claimThroughput(pool, worker);
    if (want('backlog')) await backlog(pool, worker);
    results.fanOut = want('fanout')
      ? await fanOut({ engines, admin, worker, smoke: SMOKE, seconds: SECONDS })
      : [];
    if (pgStats) await printPgStats(pool);
  } finally {
    await Promise.all(engines.map((e) => e.stop()));
    await pool.end();
    await pgServer.stop();
  }
  print();
}

/** Raw: a single-row UPDATE … RETURNING per transaction, one row per client (no row contention). */
async function rawBaselines(pool: pg.Pool) {
  await pool.query('CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0)');
  await pool.query('INSERT INTO bench_counter (id) SELECT g FROM generate_series(0, 63) g');
  const raw: Record<number, number> = {};
  for (const c of [1, 4, 16]) {
    raw[c] = await measuredRate(c, MS, (client) =>
      pool.query({
        name: 'raw-update',
        text: 'UPDATE bench_counter SET n = n + 1 WHERE id = $1 RETURNING n',
        values: [client],
      }),
    );
    row(`raw: single-row UPDATE … RETURNING, ${c} client(s)`, raw[c], raw[c], 'tx/s', 'the baseline itself');
  }
  results.rawUpdateTps = raw;
  // The raw claim: the same statement shape as fetch-and-lock, on a table with a partial index.
  await pool.query(`CREATE TABLE bench_jobs (id bigserial PRIMARY KEY, topic text NOT NULL, state text NOT NULL, priority int NOT NULL DEFAULT 0,
    available_at timestamptz NOT NULL DEFAULT now(), locked_until timestamptz) WITH (fillfactor = 70)`);
  await pool.query(
    `CREATE INDEX bench_jobs_open ON bench_jobs (topic, priority DESC, available_at) WHERE state = 'OPEN'`,
  );
  await pool.query(
    `INSERT INTO bench_jobs (topic, state) SELECT 'claim', 'OPEN' FROM generate_series(1, ${SMOKE ? 20_000 : 300_000})`,
  );
  await pool.query('VACUUM ANALYZE bench_jobs');
  const claim = `WITH c AS (SELECT id FROM bench_jobs WHERE state = 'OPEN' AND topic = 'claim' AND available_at <= now()
      ORDER BY priority DESC, available_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    UPDATE bench_jobs j SET state = 'LEASED', locked_until = now() + interval '1 minute' FROM c WHERE j.id = c.id RETURNING j.id`;
  results.rawClaimPerSec = await measuredRate(4, MS, () => pool.query({ name: 'raw-claim', text: claim }));
  const rawClaim = results.rawClaimPerSec as number;
  row('raw: claim statement (LIMIT 1), 4 clients', rawClaim, rawClaim, 'claims/s', 'the baseline itself');
}

const JOURNAL = `mutation($i: JournalStepInput!) { journalStep(input: $i) { taskState } }`;
const BATCH = `mutation($i: JournalStepsInput!) { journalSteps(input: $i) { taskState } }`;
const FETCH = `mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) { id attempt } }`;
const COMPLETE = `mutation($i: CompleteTaskInput!) { completeTask(input: $i) { state } }`;

type Client = ReturnType<typeof gqlClient>;

async function startMany(admin: Client, key: string, n: number) {
  for (let i = 0; i < n; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, n - i) }, (_, j) =>
        admin(`mutation($k: String!, $v: JSON) { startProcess(key: $k, variables: $v) { id } }`, {
          k: key,
          v: { n: i + j },
        }),
      ),
    );
  }
}

async function fetchTasks(worker: Client, workerId: string, n: number, topicName = 'abada:agent') {
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

/** 1. journalStep commits/s with 1, 4, 16 clients, each on its own leased task (model calls, no limits). */
async function journalThroughput(pool: pg.Pool, admin: Client, worker: Client) {
  // Every measurement starts on fresh tasks: an agent task has tens of steps, not thousands.
  let tasks: { id: string; attempt: number }[] = [];
  let seq: number[] = [];
  const fresh = async () => {
    await startMany(admin, 'bench', 16);
    tasks = await fetchTasks(worker, 'journal-bench', 16);
    seq = tasks.map(() => 0);
  };
  const raw = results.rawUpdateTps as Record<number, number>;
  for (const c of want('journal') ? [1, 4, 16] : []) {
    await fresh();
    // Each operation is one model call journaled STARTED then COMPLETED: two journalStep commits.
    const ops = await measuredRate(c, MS, async (client) => {
      const t = tasks[client];
      const sequence = ++seq[client];
      const base = {
        taskId: t.id,
        workerId: 'journal-bench',
        attempt: t.attempt,
        sequence,
        kind: 'MODEL_CALL',
        model: 'gpt-4.1-mini',
        request: { model: 'gpt-4.1-mini', messagesHash: `h${sequence}` },
      };
      await worker(JOURNAL, { i: { ...base, state: 'STARTED' } });
      await worker(JOURNAL, {
        i: {
          ...base,
          state: 'COMPLETED',
          response: { role: 'assistant', content: 'ok' },
          usage: { inputTokens: 10, outputTokens: 5 },
        },
      });
    });
    row(
      `journalStep commits/s, ${c} client(s)`,
      ops * 2,
      raw[c],
      'commits/s',
      'raw: single-row UPDATE … RETURNING',
    );
  }
  // journalSteps: a worker sends n steps (model calls, STARTED + COMPLETED) per request and commit.
  for (const n of [8, 32]) {
    await fresh();
    const batches = await measuredRate(16, MS, async (client) => {
      const t = tasks[client];
      const steps = [];
      for (let k = 0; k < n / 2; k++) {
        const sequence = ++seq[client];
        const base = {
          sequence,
          kind: 'MODEL_CALL',
          model: 'gpt-4.1-mini',
          request: { model: 'gpt-4.1-mini', messagesHash: `h${sequence}` },
        };
        steps.push({ ...base, state: 'STARTED' });
        steps.push({
          ...base,
          state: 'COMPLETED',
          response: { role: 'assistant', content: 'ok' },
          usage: { inputTokens: 10, outputTokens: 5 },
        });
      }
      await worker(BATCH, { i: { taskId: t.id, workerId: 'journal-bench', attempt: t.attempt, steps } });
    });
    row(
      `journalSteps (${n} per request), steps/s, 16 clients`,
      batches * n,
      raw[16],
      'steps/s',
      `${batches.toFixed(0)} commits/s`,
    );
  }
  // The floor of one GraphQL request on this engine: no database work at all.
  const floor = await measuredRate(16, MS, () => worker(`{ __typename }`));
  row('GraphQL `{ __typename }` requests/s, 16 clients', floor, raw[16], 'requests/s', 'no database work');
  void pool;
}

/**
 * 2. A 002-shaped task: fetch, 9 journal calls, complete — 11 commits per task. `paired`: as the Agent
 * Worker journals it (a step's end travels with the next step's start in one journalSteps request):
 * fetch, 6 journal requests, complete — 8 commits for the same 11 state changes.
 */
async function taskThroughput(pool: pg.Pool, admin: Client, worker: Client) {
  const raw = results.rawUpdateTps as Record<number, number>;
  for (const [loops, paired] of [
    [4, false],
    [16, false],
    [16, true],
  ] as const) {
    await startMany(admin, 'bench', SMOKE ? 40 : 1200);
    const r = await measuredRate(loops, MS, async (client) => {
      const [t] = (
        await worker(FETCH, {
          i: {
            workerId: `task-bench-${client}`,
            maxTasks: 1,
            topics: [{ topicName: 'abada:agent', lockDurationMs: 60_000 }],
          },
        })
      ).fetchAndLock;
      if (!t) return;
      const base = { taskId: t.id, workerId: `task-bench-${client}`, attempt: t.attempt };
      const model = (sequence: number, state: string) => ({
        sequence,
        kind: 'MODEL_CALL',
        state,
        model: 'gpt-4.1-mini',
        request: { model: 'gpt-4.1-mini', messagesHash: `m${sequence}` },
        response: state === 'COMPLETED' ? { role: 'assistant', content: 'x' } : null,
        usage: state === 'COMPLETED' ? { inputTokens: 100, outputTokens: 10 } : null,
      });
      const tool = (sequence: number, state: string, toolRef: string) => ({
        sequence,
        kind: 'TOOL_CALL',
        state,
        toolRef,
        request: { callId: `c${sequence}`, arguments: { customerId: 'C-42' } },
        response: state === 'COMPLETED' ? { ok: true } : null,
      });
      const one = (step: Record<string, unknown>) => worker(JOURNAL, { i: { ...base, ...step } });
      const two = (a: Record<string, unknown>, b: Record<string, unknown>) =>
        worker(BATCH, { i: { ...base, steps: [a, b] } });
      if (paired) {
        await one(model(1, 'STARTED'));
        await one(model(1, 'COMPLETED'));
        await two(tool(2, 'COMPLETED', 'crm/get_customer'), model(3, 'STARTED'));
        await two(model(3, 'COMPLETED'), tool(4, 'STARTED', 'crm/create_ticket'));
        await two(tool(4, 'COMPLETED', 'crm/create_ticket'), model(5, 'STARTED'));
        await one(model(5, 'COMPLETED'));
      } else {
        await one(model(1, 'STARTED'));
        await one(model(1, 'COMPLETED'));
        await one(tool(2, 'COMPLETED', 'crm/get_customer'));
        await one(model(3, 'STARTED'));
        await one(model(3, 'COMPLETED'));
        await one(tool(4, 'STARTED', 'crm/create_ticket'));
        await one(tool(4, 'COMPLETED', 'crm/create_ticket'));
        await one(model(5, 'STARTED'));
        await one(model(5, 'COMPLETED'));
      }
      await worker(COMPLETE, {
        i: { ...base, variables: { out: { ok: true } }, metadata: { model: 'gpt-4.1-mini' } },
      });
    });
    const commits = paired ? 8 : 11;
    row(
      `002-shaped tasks, ${loops} loops${paired ? ', worker pairing' : ''} (×${commits} commits)`,
      r * commits,
      raw[Math.min(loops, 16)],
      'commits/s',
      `${r.toFixed(1)} tasks/s`,
    );
  }
  void pool;
}

/** 3. fetchAndLock with maxTasks 1 and 50 (4 clients) against the raw claim statement. */
async function claimThroughput(pool: pg.Pool, worker: Client) {
  await seedOpenTasks(pool, 'claim', SMOKE ? 5_000 : 200_000);
  const raw = results.rawClaimPerSec as number;
  for (const max of [1, 50]) {
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
      'raw: one claim statement, 4 clients',
    );
  }
  void pool;
}

/** 4. Fetch latency with a steady small vs huge backlog, completing what is fetched (dead tuples pile up). */
async function backlog(pool: pg.Pool, worker: Client) {
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

async function printPgStats(pool: pg.Pool) {
  const { rows: top } = await pool.query(
    `SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
       round(mean_plan_time::numeric, 3) AS plan_ms,
       left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
     FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`,
  );
  console.log('\npg_stat_statements (top 25 by total time)');
  for (const r of top)
    console.log(
      `${String(r.total_ms).padStart(8)} ms ${String(r.calls).padStart(8)}× ${String(r.mean_ms).padStart(8)} ms (plan ${r.plan_ms} ms)  ${r.query}`,
    );
  const { rows: fns } = await pool.query(
    `SELECT funcname, calls, round(total_time::numeric, 0) AS total_ms, round(self_time::numeric, 0) AS self_ms
     FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 10`,
  );
  for (const r of fns)
    console.log(`fn ${r.funcname}: ${r.calls}× total ${r.total_ms} ms self ${r.self_ms} ms`);
}

function print() {
  const fmt = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(2)) : '—');
  console.log(
    `\nAbada bench${SMOKE ? ' (smoke)' : ''} — ${SECONDS}s per measurement, ${os.cpus().length} cores\n`,
  );
  console.log(`| figure | Abada | baseline | ratio | note |\n|---|---|---|---|---|`);
  for (const r of rows)
    console.log(
      `| ${r.figure} | ${fmt(r.abada)} ${r.unit} | ${fmt(r.baseline)} | ${r.ratio.toFixed(2)} | ${r.note ?? ''} |`,
    );
  console.log(
    `\nCPU ms per unit of each figure (commit, step, task claimed), by process group\n\n| figure | engines | PostgreSQL | bench client | total |\n|---|---|---|---|---|`,
  );
  for (const r of rows) {
    const c = r.cpuPerUnit;
    if (c)
      console.log(
        `| ${r.figure} | ${c.engines.toFixed(3)} | ${c.postgres.toFixed(3)} | ${c.bench.toFixed(3)} | ${(c.engines + c.postgres + c.bench).toFixed(3)} |`,
      );
  }
  const f = results.fanOut as {
    subscribers: number;
    p50: number;
    p99: number;
    received: number;
    expected: number;
    engineRssMb: number[];
    engineCpuMs: number[];
  }[];
  console.log(
    `\n| subscribers | proposal → approvalOpened p50 | p99 | received/expected | engine RSS MB | engine CPU ms |\n|---|---|---|---|---|---|`,
  );
  for (const x of f)
    console.log(
      `| ${x.subscribers} | ${fmt(x.p50)} ms | ${fmt(x.p99)} ms | ${x.received}/${x.expected} | ${x.engineRssMb.map((v) => v.toFixed(0)).join(' / ')} | ${x.engineCpuMs.join(' / ')} |`,
    );
  results.table = rows;
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/${SMOKE ? 'smoke' : new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(results, null, 2));
  console.log(`\nwritten ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
