/**
 * What the API layer costs a whole agent: its seven requests (start, fetch, four journal calls, the
 * completion; unbatched) over GraphQL and HTTP, against the same engine commands called directly. Both
 * run in this process, on an engine started here on the bench's database, so the difference is the
 * layer on both sides (the operation's variables, execution and answer; HTTP; the client): CPU of this
 * process per agent, 16 agents in flight, alternating windows. PostgreSQL's work is the same both ways
 * and is not counted. The gap to the in-process peers (docs/performance.md) is this layer.
 */
import { randomUUID } from 'node:crypto';
import { startEngine } from '../../server/app.js';
import {
  CompleteTask,
  createClient,
  FetchAndLock,
  type GraphQLClient,
  JournalStep,
  JournalSteps,
} from '../../server/client/index.js';
import { loadConfig } from '../../server/config.js';
import type { Actor, EngineContext } from '../../server/engine/common/index.js';
import { startProcess } from '../../server/engine/instances/index.js';
import { journalStep, journalSteps } from '../../server/engine/journal/index.js';
import { identify } from '../../server/engine/principals/index.js';
import { completeTask, fetchAndLock } from '../../server/engine/tasks/index.js';
import { type Client, results, SMOKE, START } from './context.js';
import { modelStep, toolStep } from './tasks.js';

const AGENTS = SMOKE ? 16 : 480;
const WARM = SMOKE ? 16 : 160;
const ROUNDS = SMOKE ? 1 : 3;
const REQUESTS = 7;

const model = modelStep;
const tool = (sequence: number, state: string) =>
  toolStep(sequence, state, sequence === 2 ? 'crm/get_customer' : 'crm/create_ticket');
/** The agent's journal, as four calls (a step's end with the next start) and the completion's last end. */
const CALLS = [
  [model(1, 'STARTED')],
  [model(1, 'COMPLETED'), tool(2, 'COMPLETED'), model(3, 'STARTED')],
  [model(3, 'COMPLETED'), tool(4, 'STARTED')],
  [tool(4, 'COMPLETED'), model(5, 'STARTED')],
];
const LAST = [model(5, 'COMPLETED')];
const FETCH_INPUT = () => ({
  workerId: 'bench-api',
  maxTasks: 1,
  requestId: randomUUID(),
  topics: [{ topicName: 'abada:agent', lockDurationMs: 60_000 }],
});
const DONE = { variables: { out: { ok: true } }, metadata: { model: 'gpt-4.1-mini' } };

type Task = { id: string; attempt: number };

/** One agent over the API: the admin's start, then the Agent Worker's own documents (server/client). */
async function overApi(admin: GraphQLClient, worker: GraphQLClient, n: number) {
  await admin.request(START, { k: 'bench', v: { n } });
  let t: Task | undefined;
  while (!t) [t] = (await worker.request(FetchAndLock, { input: FETCH_INPUT() })).fetchAndLock;
  const base = { taskId: t.id, workerId: 'bench-api', attempt: t.attempt };
  for (const steps of CALLS)
    if (steps.length === 1) await worker.request(JournalStep, { input: { ...base, ...steps[0] } as never });
    else await worker.request(JournalSteps, { input: { ...base, steps } as never });
  await worker.request(CompleteTask, { input: { ...base, ...DONE, steps: LAST } as never });
}

/** The same agent as engine commands called directly. */
async function direct(ctx: EngineContext, admin: Actor, worker: Actor, n: number) {
  await startProcess(ctx, admin, { key: 'bench', variables: { n } });
  let t: Task | undefined;
  while (!t) [t] = await fetchAndLock(ctx, worker, FETCH_INPUT());
  const base = { taskId: t.id, workerId: 'bench-api', attempt: t.attempt };
  const each = (steps: object[]) => steps.map((s) => ({ ...base, ...s }) as never);
  for (const steps of CALLS)
    if (steps.length === 1) await journalStep(ctx, worker, each(steps)[0]);
    else await journalSteps(ctx, worker, each(steps));
  await completeTask(ctx, worker, { ...base, ...DONE, steps: LAST } as never);
}

/** CPU ms of this process per agent over `count` agents, 16 in flight. */
async function window(count: number, one: (n: number) => Promise<void>, from: number) {
  const c0 = process.cpuUsage();
  let n = from;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (n < from + count) await one(n++);
    }),
  );
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / count;
}

export async function apiLayer(url: string, admin: Client, key: string, adminToken: string) {
  const engine = await startEngine({
    config: loadConfig({
      DATABASE_URL: url,
      ABADA_ENCRYPTION_KEY: key,
      ABADA_ADMIN_TOKEN: adminToken,
      ABADA_HEARTBEAT_DEBOUNCE_MS: '5000',
      PORT: '0',
      HOST: '127.0.0.1',
    }),
    log: () => {},
    sweeps: false,
  });
  try {
    const token = (
      await admin(
        `mutation { createPrincipal(input: {kind: WORKER, name: "bench-api-worker", topics: ["abada:agent"]}) { token } }`,
      )
    ).createPrincipal.token as string;
    const adminActor = (await identify(engine.context, adminToken)).actor!;
    const workerActor = (await identify(engine.context, token)).actor!;
    const http = createClient({ url: engine.url });
    const api = (n: number) => overApi(http.as(adminToken), http.as(token), n);
    const call = (n: number) => direct(engine.context, adminActor, workerActor, n);
    let n = 3_000_000_000;
    // warm: both ways once (connections, statements, V8's compiled code)
    for (const one of [api, call]) {
      await window(WARM, one, n);
      n += WARM;
    }
    const rounds: { overApi: number; direct: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const a = await window(AGENTS, api, n);
      n += AGENTS;
      const d = await window(AGENTS, call, n);
      n += AGENTS;
      rounds.push({ overApi: a, direct: d });
    }
    const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[(xs.length - 1) >> 1];
    const overApiMs = mid(rounds.map((r) => r.overApi));
    const directMs = mid(rounds.map((r) => r.direct));
    results.apiLayer = {
      agents: AGENTS,
      rounds,
      cpuMsPerAgentOverApi: overApiMs,
      cpuMsPerAgentDirect: directMs,
      requestsPerAgent: REQUESTS,
      layerUsPerRequest: ((overApiMs - directMs) * 1000) / REQUESTS,
    };
  } finally {
    await engine.close();
  }
}
