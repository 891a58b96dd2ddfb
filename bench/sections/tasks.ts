/** 2. Whole 002-shaped tasks: fetch, journal, complete. */
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
 * 2. A 002-shaped task: fetch, 9 journal calls, complete — 11 commits per task. `paired`: as the Agent
 * Worker journals it (a step's end travels with the next step's start in one journalSteps request):
 * fetch, 6 journal requests, complete — 8 commits for the same 11 state changes.
 */
export async function taskThroughput(pool: pg.Pool, admin: Client, worker: Client) {
  const raw = results.rawUpdateTps as Record<number, number>;
  for (const [loops, paired] of [
    [4, false],
    [16, false],
    [16, true],
  ] as const) {
    await startMany(admin, 'bench', SMOKE ? 40 : 1200);
    const r = await measuredRate(loops, MS, (client) => oneTask(worker, client, paired));
    const commits = paired ? 8 : 11;
    if (paired) results.pairedTasks = r * (MS / 1000);
    row(
      `002-shaped tasks, ${loops} loops${paired ? ', worker pairing' : ''} (×${commits} commits)`,
      r * commits,
      raw[Math.min(loops, 16)],
      'commits/s',
      `${r.toFixed(1)} tasks/s`,
    );
  }
  headline();
  void pool;
}

/** The model time an agent spends per task (3 model answers of ~1 s): what the engine's CPU is set against. */
export const MODEL_MS_PER_TASK = 3000;

/**
 * The headline: engine + PostgreSQL CPU per 002-shaped task as the Agent Worker journals it (8 commits),
 * and how many agents one core of engine + database keeps moving at 3 s of model time per task.
 */
function headline() {
  const paired = rows[rows.length - 1].cpuPerUnit;
  if (!paired) return;
  const perTask = (paired.engines + paired.postgres) * 8;
  results.cpuMsPerTask = perTask;
  results.cpuMsPerTaskSplit = { engines: paired.engines * 8, postgres: paired.postgres * 8 };
  results.agentsPerCore = MODEL_MS_PER_TASK / perTask;
}

/** One task on loop `client`: fetched, journaled step by step or paired, completed. */
async function oneTask(worker: Client, client: number, paired: boolean) {
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
}
