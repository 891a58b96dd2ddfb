/** 2. Whole 002-shaped tasks: fetch, journal, complete. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { EngineClient } from '../../server/worker/graphql.js';
import { rate } from '../lib.js';
import {
  type Client,
  COMPLETE,
  FETCH,
  JOURNAL,
  BATCH,
  MS,
  measuredRate,
  results,
  row,
  rows,
  SECONDS,
  SMOKE,
  START,
  startMany,
} from './context.js';
import { rawTaskFloor } from './floor.js';
import { printPgStats, resetPgStats } from './report.js';

/**
 * How a 002-shaped task (fetch, 3 model calls, a read, a write, complete: 11 state changes) is journaled:
 *  - `single`: one request and one commit per state change — 11 commits;
 *  - `paired`: as the Agent Worker journaled it until issue 18's second slice (a step's end travels with
 *    the next step's start): fetch, 6 journal requests, complete — 8 requests, 8 commits;
 *  - `worker`: as the Agent Worker journals it now — a read goes out while only lossless ends are held,
 *    so the model's answer, the read's answer and the next model call travel together, and the last
 *    model call's end travels with the completion: fetch, 4 journal requests, complete — 6 requests,
 *    7 commits (the completion journals its steps, then commits itself);
 *  - `batched`: the same calls, but the 16 loops are 16 tasks of one Agent Worker process, as its
 *    fetch loop and client run them: one fetch at a time for every free slot (a loop waiting for its next
 *    task is a free slot; server/worker/loop.ts), and journal calls of tasks that are ready at the same
 *    moment in one journalBatch request (server/worker/batcher.ts) — as the Agent Worker sends them since
 *    issue 18's seventh slice. Completions stay one request per task.
 */
type Shape = 'single' | 'paired' | 'worker' | 'batched';
const SHAPES: Record<Shape, { commits: number; requests: number; label: string }> = {
  single: { commits: 11, requests: 11, label: '' },
  paired: { commits: 8, requests: 8, label: ', end with next start (8 requests)' },
  worker: { commits: 7, requests: 6, label: ', each task its own journal requests (6 requests)' },
  batched: {
    commits: 7,
    requests: 6,
    label: ', as the Agent Worker journals it: 16 tasks on one client, fetches and journal calls batched',
  },
};

/** The unmeasured run of each shape before its window (BENCH_WARMUP_MS). */
const WARM_UP_MS = SMOKE ? 0 : 1500;

export async function taskThroughput(pool: pg.Pool, admin: Client, worker: Client) {
  const raw = results.rawUpdateTps as Record<number, number>;
  // BENCH_TASK_SHAPES=worker (comma-separated): only those shapes, e.g. to profile one of them
  const only = process.env.BENCH_TASK_SHAPES?.split(',');
  const runs = (
    [
      [4, 'single'],
      [16, 'single'],
      [16, 'paired'],
      [16, 'worker'],
      [16, 'batched'],
    ] as const
  ).filter(([, shape]) => !only || only.includes(shape));
  await startCost(admin, raw[16]);
  // the Agent Worker's own client (its journal batcher), shared by the loops of the batched shape
  const agent = { client: new EngineClient(worker.url, worker.token), slots: new SlotFetcher(worker) };
  for (const [loops, shape] of runs) {
    // unmeasured, the same shape first: every engine connection prepares its statements (once per
    // connection, ~5 ms for the journal's), as connections that served this shape before have
    const warm = Number(process.env.BENCH_WARMUP_MS ?? WARM_UP_MS);
    // enough open tasks for the window and the warm-up (at up to ~200 tasks/s)
    await startMany(admin, 'bench', SMOKE ? 40 : 1200 + Math.ceil(warm / 5));
    if (warm > 0) await rate(loops, warm, (client) => oneTask(worker, client, shape, agent));
    const before = { ...agent.client.journal.counts };
    const fetchesBefore = agent.slots.counts.fetches;
    // BENCH_PG_STATS=1: the headline's window gets PostgreSQL's statement figures of its own, per task
    const pgStats = shape === 'batched' && (await resetPgStats(pool));
    const r = await measuredRate(loops, MS, (client) => oneTask(worker, client, shape, agent));
    if (pgStats)
      await printPgStats(pool, { title: 'the headline window', units: r * (MS / 1000), unit: 'task' });
    const { commits, label } = SHAPES[shape];
    if (shape === 'batched') {
      results.pairedTasks = r * (MS / 1000);
      results.journalBatching = {
        ...batchingOf(before, agent.client.journal.counts),
        tasksPerFetch: (r * (MS / 1000)) / Math.max(1, agent.slots.counts.fetches - fetchesBefore),
      };
    }
    row(
      `002-shaped tasks, ${loops} loops${label} (×${commits} commits)`,
      r * commits,
      raw[Math.min(loops, 16)],
      'commits/s',
      `${r.toFixed(1)} tasks/s`,
    );
    if (shape === 'paired') results.cpuMsPerTaskPaired = perTask(commits);
    if (shape === 'worker') results.cpuMsPerTaskUnbatched = perTask(commits);
  }
  headline();
  // the same task's rows written by hand, right after the headline: what PostgreSQL must do anyway
  if (runs.some(([, shape]) => shape === 'batched'))
    // (the floor runs up to ~1,200 tasks/s; a client that runs out idles, rate() counts whole tasks)
    await rawTaskFloor(pool, admin, SMOKE ? 40 : Math.ceil(SECONDS * 1200));
}

/**
 * What starting an agent costs: `startProcess` of the 002-shaped process (the instance, its first task,
 * their history rows and the task's notice), 16 clients. Not part of the headline, which starts its
 * instances beforehand; the agents-in-flight section starts one per task. `cpuMsPerStart` in the JSON.
 */
async function startCost(admin: Client, raw16: number) {
  const starts = await measuredRate(16, MS, (client, i) =>
    admin(START, { k: 'bench', v: { n: client * 1_000_000 + i } }),
  );
  row('startProcess, 16 clients (instance + first task)', starts, raw16, 'starts/s', 'a commit each');
  const cpu = rows[rows.length - 1].cpuPerUnit;
  if (cpu) results.cpuMsPerStart = cpu.engines + cpu.postgres;
}

/** Engine + PostgreSQL CPU per task from the last row (CPU per commit × commits per task). */
function perTask(commits: number): number | undefined {
  const cpu = rows[rows.length - 1].cpuPerUnit;
  return cpu ? (cpu.engines + cpu.postgres) * commits : undefined;
}

/** The model time an agent spends per task (3 model answers of ~1 s): what the engine's CPU is set against. */
export const MODEL_MS_PER_TASK = 3000;

/**
 * The headline: engine + PostgreSQL CPU per 002-shaped task as the Agent Worker journals it, and how many
 * agents one core of engine + database keeps moving at 3 s of model time per task.
 */
function headline() {
  const cpu = rows[rows.length - 1].cpuPerUnit;
  if (!cpu) return;
  const { commits } = SHAPES.batched;
  results.cpuMsPerTask = perTask(commits);
  results.cpuMsPerTaskSplit = { engines: cpu.engines * commits, postgres: cpu.postgres * commits };
  results.agentsPerCore = MODEL_MS_PER_TASK / (results.cpuMsPerTask as number);
  // the bench client does the same work per task whatever the engine does, so engine + PostgreSQL CPU
  // over the client's, in the same window, compares runs minutes apart on a machine whose speed drifts
  if (cpu.bench > 0) results.cpuPerTaskOverClient = (cpu.engines + cpu.postgres) / cpu.bench;
}

/** How the batched shape's journal calls travelled: calls per request, and how many went together. */
function batchingOf(
  a: EngineClient['journal']['counts'],
  b: EngineClient['journal']['counts'],
): { calls: number; requests: number; callsPerRequest: number; batchedShare: number } {
  const calls = b.calls - a.calls;
  const requests = b.requests - a.requests;
  return {
    calls,
    requests,
    callsPerRequest: requests ? calls / requests : 0,
    batchedShare: calls ? (b.batched - a.batched) / calls : 0,
  };
}

const AGENT_WORKER_ID = 'task-bench-agent-worker';

/**
 * The Agent Worker's fetch loop (server/worker/loop.ts) for the batched shape: one fetch at a time, for as
 * many tasks as loops are waiting (its free slots).
 */
export class SlotFetcher {
  private waiting: { resolve(t: Task | undefined): void; reject(e: unknown): void }[] = [];
  private fetching = false;
  readonly counts = { fetches: 0 };

  constructor(private readonly worker: Client) {}

  next(): Promise<Task | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.fetching || this.waiting.length === 0) return;
    this.fetching = true;
    setImmediate(async () => {
      const free = this.waiting.splice(0, 100);
      this.counts.fetches++;
      try {
        const got = await fetchAgentTasks(this.worker, AGENT_WORKER_ID, free.length);
        for (const [i, w] of free.entries()) w.resolve(got[i]);
      } catch (e) {
        for (const w of free) w.reject(e);
      } finally {
        this.fetching = false;
        this.pump();
      }
    });
  }
}

type Task = { id: string; attempt: number };

async function fetchAgentTasks(
  worker: Client,
  workerId: string,
  maxTasks: number,
  named = true,
): Promise<Task[]> {
  return (
    await worker(FETCH, {
      i: {
        workerId,
        maxTasks,
        topics: [{ topicName: 'abada:agent', lockDurationMs: 60_000 }],
        // the Agent Worker names every fetch, so a re-sent one gets its claim back (SPEC §3)
        ...(named ? { requestId: randomUUID() } : {}),
      },
    })
  ).fetchAndLock;
}

/** A 002-shaped task's model call as the Agent Worker journals it, at `state`. */
export const modelStep = (sequence: number, state: string) => ({
  sequence,
  kind: 'MODEL_CALL',
  state,
  model: 'gpt-4.1-mini',
  request: { model: 'gpt-4.1-mini', messagesHash: `m${sequence}` },
  response: state === 'COMPLETED' ? { role: 'assistant', content: 'x' } : null,
  usage: state === 'COMPLETED' ? { inputTokens: 100, outputTokens: 10 } : null,
});

/** A 002-shaped task's tool call `toolRef`, at `state`. */
export const toolStep = (sequence: number, state: string, toolRef: string) => ({
  sequence,
  kind: 'TOOL_CALL',
  state,
  toolRef,
  request: { callId: `c${sequence}`, arguments: { customerId: 'C-42' } },
  response: state === 'COMPLETED' ? { ok: true } : null,
});

/** One task on loop `client`: fetched, journaled in `shape`, completed (true); nothing if none was fetched. */
export async function oneTask(
  worker: Client,
  client: number,
  shape: Shape,
  agent: { client: EngineClient; slots: SlotFetcher },
) {
  // the batched shape's loops are the tasks of one Agent Worker process: one worker id, its fetch loop
  const batched = shape === 'batched';
  const workerId = batched ? AGENT_WORKER_ID : `task-bench-${client}`;
  const agentClient = agent.client;
  const t = batched
    ? await agent.slots.next()
    : (await fetchAgentTasks(worker, workerId, 1, shape === 'worker'))[0];
  if (!t) return; // rate() counts it as an operation; a window that counts tasks does not
  const base = { taskId: t.id, workerId, attempt: t.attempt };
  const one = (step: Record<string, unknown>) =>
    batched
      ? agentClient.journalStep({ ...base, ...step } as never)
      : worker(JOURNAL, { i: { ...base, ...step } });
  const batch = (...steps: Record<string, unknown>[]) =>
    batched
      ? agentClient.journalSteps({ ...base, steps } as never)
      : worker(BATCH, { i: { ...base, steps } });
  const complete = (steps: Record<string, unknown>[]) =>
    worker(COMPLETE, {
      i: {
        ...base,
        variables: { out: { ok: true } },
        metadata: { model: 'gpt-4.1-mini' },
        ...(steps.length ? { steps } : {}),
      },
    });
  if (shape === 'worker' || batched) {
    await one(modelStep(1, 'STARTED'));
    await batch(
      modelStep(1, 'COMPLETED'),
      toolStep(2, 'COMPLETED', 'crm/get_customer'),
      modelStep(3, 'STARTED'),
    );
    await batch(modelStep(3, 'COMPLETED'), toolStep(4, 'STARTED', 'crm/create_ticket'));
    await batch(toolStep(4, 'COMPLETED', 'crm/create_ticket'), modelStep(5, 'STARTED'));
    await complete([modelStep(5, 'COMPLETED')]);
    return true;
  }
  if (shape === 'paired') {
    await one(modelStep(1, 'STARTED'));
    await one(modelStep(1, 'COMPLETED'));
    await batch(toolStep(2, 'COMPLETED', 'crm/get_customer'), modelStep(3, 'STARTED'));
    await batch(modelStep(3, 'COMPLETED'), toolStep(4, 'STARTED', 'crm/create_ticket'));
    await batch(toolStep(4, 'COMPLETED', 'crm/create_ticket'), modelStep(5, 'STARTED'));
    await one(modelStep(5, 'COMPLETED'));
  } else {
    await one(modelStep(1, 'STARTED'));
    await one(modelStep(1, 'COMPLETED'));
    await one(toolStep(2, 'COMPLETED', 'crm/get_customer'));
    await one(modelStep(3, 'STARTED'));
    await one(modelStep(3, 'COMPLETED'));
    await one(toolStep(4, 'STARTED', 'crm/create_ticket'));
    await one(toolStep(4, 'COMPLETED', 'crm/create_ticket'));
    await one(modelStep(5, 'STARTED'));
    await one(modelStep(5, 'COMPLETED'));
  }
  await complete([]);
  return true;
}
