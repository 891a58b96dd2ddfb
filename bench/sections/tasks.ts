/** 2. Whole 002-shaped tasks: fetch, journal, complete. */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
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
  SMOKE,
  startMany,
} from './context.js';

/**
 * How a 002-shaped task (fetch, 3 model calls, a read, a write, complete: 11 state changes) is journaled:
 *  - `single`: one request and one commit per state change — 11 commits;
 *  - `paired`: as the Agent Worker journaled it until issue 18's second slice (a step's end travels with
 *    the next step's start): fetch, 6 journal requests, complete — 8 requests, 8 commits;
 *  - `worker`: as the Agent Worker journals it now — a read goes out while only lossless ends are held,
 *    so the model's answer, the read's answer and the next model call travel together, and the last
 *    model call's end travels with the completion: fetch, 4 journal requests, complete — 6 requests,
 *    7 commits (the completion journals its steps, then commits itself).
 */
type Shape = 'single' | 'paired' | 'worker';
const SHAPES: Record<Shape, { commits: number; requests: number; label: string }> = {
  single: { commits: 11, requests: 11, label: '' },
  paired: { commits: 8, requests: 8, label: ', end with next start (8 requests)' },
  worker: { commits: 7, requests: 6, label: ', as the worker journals it (6 requests)' },
};

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
    ] as const
  ).filter(([, shape]) => !only || only.includes(shape));
  await startCost(admin, raw[16]);
  for (const [loops, shape] of runs) {
    await startMany(admin, 'bench', SMOKE ? 40 : 1200);
    const r = await measuredRate(loops, MS, (client) => oneTask(worker, client, shape));
    const { commits, label } = SHAPES[shape];
    if (shape === 'worker') results.pairedTasks = r * (MS / 1000);
    row(
      `002-shaped tasks, ${loops} loops${label} (×${commits} commits)`,
      r * commits,
      raw[Math.min(loops, 16)],
      'commits/s',
      `${r.toFixed(1)} tasks/s`,
    );
    if (shape === 'paired') results.cpuMsPerTaskPaired = perTask(commits);
  }
  headline();
  void pool;
}

/**
 * What starting an agent costs: `startProcess` of the 002-shaped process (the instance, its first task,
 * their history rows and the task's notice), 16 clients. Not part of the headline, which starts its
 * instances beforehand; the agents-in-flight section starts one per task. `cpuMsPerStart` in the JSON.
 */
async function startCost(admin: Client, raw16: number) {
  const starts = await measuredRate(16, MS, (client, i) =>
    admin(`mutation($k: String!, $v: JSON) { startProcess(key: $k, variables: $v) { id } }`, {
      k: 'bench',
      v: { n: client * 1_000_000 + i },
    }),
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
  const { commits } = SHAPES.worker;
  results.cpuMsPerTask = perTask(commits);
  results.cpuMsPerTaskSplit = { engines: cpu.engines * commits, postgres: cpu.postgres * commits };
  results.agentsPerCore = MODEL_MS_PER_TASK / (results.cpuMsPerTask as number);
}

/** One task on loop `client`: fetched, journaled in `shape`, completed. */
async function oneTask(worker: Client, client: number, shape: Shape) {
  const [t] = (
    await worker(FETCH, {
      i: {
        workerId: `task-bench-${client}`,
        maxTasks: 1,
        topics: [{ topicName: 'abada:agent', lockDurationMs: 60_000 }],
        // the Agent Worker names every fetch, so a re-sent one gets its claim back (SPEC §3)
        ...(shape === 'worker' ? { requestId: randomUUID() } : {}),
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
  const complete = (steps: Record<string, unknown>[]) =>
    worker(COMPLETE, {
      i: {
        ...base,
        variables: { out: { ok: true } },
        metadata: { model: 'gpt-4.1-mini' },
        ...(steps.length ? { steps } : {}),
      },
    });
  const batch = (...steps: Record<string, unknown>[]) => worker(BATCH, { i: { ...base, steps } });
  if (shape === 'worker') {
    await one(model(1, 'STARTED'));
    await batch(model(1, 'COMPLETED'), tool(2, 'COMPLETED', 'crm/get_customer'), model(3, 'STARTED'));
    await two(model(3, 'COMPLETED'), tool(4, 'STARTED', 'crm/create_ticket'));
    await two(tool(4, 'COMPLETED', 'crm/create_ticket'), model(5, 'STARTED'));
    await complete([model(5, 'COMPLETED')]);
    return;
  }
  if (shape === 'paired') {
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
  await complete([]);
}
