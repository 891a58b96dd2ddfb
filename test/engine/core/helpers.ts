/** Shared steps for the engine-core scenario tests (issue 2), all through GraphQL. */
import pg from 'pg';
import { expect } from 'vitest';
import { graphql } from '../../../server/client/index.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';

export const TICKET = { customerId: 'C-42', subject: 'Parcel not received', priority: 'high' };

export const D = {
  resolve: graphql(
    `mutation($input: ResolveIncidentInput!) { resolveIncident(input: $input) { id state type resolution } }`,
  ),
  incidents: graphql(
    `query($state: IncidentState) { incidents(state: $state, first: 200) { totalCount edges { node { id type state taskId attempt sequence workerId message resolution processInstanceId count lastSeenAt createdAt } } } }`,
  ),
  task: graphql(`query($id: ID!) { externalTask(id: $id) { id state attempt workerId lockExpiresAt
    steps { attempt sequence kind state toolRef digest idempotencyKey reused response comment } } }`),
  retry: graphql(`mutation($id: ID!) { retryTask(id: $id) { id state attempt } }`),
  cancel: graphql(`mutation($id: ID!, $r: String!) { cancelProcess(id: $id, reason: $r) { id state } }`),
  suspend: graphql(`mutation($id: ID!) { suspendProcess(id: $id) { id state } }`),
  resume: graphql(`mutation($id: ID!) { resumeProcess(id: $id) { id state } }`),
  audit: graphql(
    `query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows events firstBrokenSeq reason } }`,
  ),
  workers: graphql(
    `query { workers { workerId principalId health consecutiveFailures lastHeartbeatAt lastRejectionAt lastRejectionReason } }`,
  ),
  credential: graphql(
    `query($t: ID!, $s: String!, $w: String!) { toolCredential(taskId: $t, server: $s, workerId: $w) { server name secret } }`,
  ),
  setCredential: graphql(`mutation($n: String!, $s: String!) { setCredential(name: $n, secret: $s) }`),
  userTasks: graphql(`query($id: ID!) { processInstance(id: $id) { userTasks { id nodeId state } } }`),
  completeUserTask: graphql(
    `mutation($id: ID!, $v: JSON) { completeUserTask(id: $id, variables: $v) { id state } }`,
  ),
};

export async function startTriage(engine: TestEngine, customerId = 'C-42', key = 'support-triage') {
  const r = await engine.ok(engine.adminToken, Q.start, {
    key,
    v: { customerId, message: 'My parcel never arrived' },
  });
  return r.startProcess.id as string;
}

/** The instance as Q.instance selects it; fails when there is none. */
export async function instance(engine: TestEngine, id: string) {
  const { processInstance } = await engine.ok(engine.adminToken, Q.instance, { id });
  if (!processInstance) throw new Error(`no process instance ${id}`);
  return processInstance;
}

export async function events(engine: TestEngine, id: string): Promise<string[]> {
  return (await instance(engine, id)).history.map((h) => h.eventType);
}

export async function taskOf(engine: TestEngine, id: string) {
  const { externalTask } = await engine.ok(engine.adminToken, D.task, { id });
  if (!externalTask) throw new Error(`no external task ${id}`);
  return externalTask;
}

export async function incidentsOf(engine: TestEngine, filter: { type?: string; taskId?: string } = {}) {
  const d = await engine.ok(engine.adminToken, D.incidents, {});
  return d.incidents.edges
    .map((e) => e.node)
    .filter(
      (n) => (!filter.type || n.type === filter.type) && (!filter.taskId || n.taskId === filter.taskId),
    );
}

/** seed 002 steps 1–3 finished, step 4 (a write of `toolRef`) STARTED: the worker is about to send it. */
export async function runToWrite(
  w: WorkerSim,
  task: Locked,
  toolRef = 'crm/create_ticket',
  args: Record<string, unknown> = TICKET,
) {
  await w.model(task, 1, 'STARTED');
  await w.model(task, 1, 'COMPLETED');
  await w.tool(
    task,
    2,
    'crm/get_customer',
    'COMPLETED',
    { customerId: 'C-42' },
    { name: 'Alice', tier: 'gold' },
  );
  await w.model(task, 3, 'STARTED');
  await w.model(task, 3, 'COMPLETED');
  return w.tool(task, 4, toolRef, 'STARTED', args);
}

export async function auditOk(engine: TestEngine, id: string) {
  const a = (await engine.ok(engine.adminToken, D.audit, { id })).verifyAudit;
  expect(a.valid).toBe(true);
  return a;
}

export interface TriageOpts {
  key: string;
  topic: string;
  maxAttempts?: number;
  limits?: string;
  /** extra agent-node lines, e.g. `on_invalid_output: review` */
  extra?: string[];
  review?: boolean;
  threshold?: number;
}

/** A process of `steps` service nodes in a row on its own topic (fetch-and-lock tests: one step). */
export const serviceProcess = (key: string, topic: string, steps = 1) => {
  const id = (i: number) => (i === 0 ? 'work' : `work${i + 1}`);
  const nodes = Array.from(
    { length: steps },
    (_, i) =>
      `  - { id: ${id(i)}, type: service, topic: ${topic}, next: ${i + 1 < steps ? id(i + 1) : 'done'} }`,
  );
  return `
kind: Process
key: ${key}
variables: { n: { type: integer } }
start: work
nodes:
${nodes.join('\n')}
  - { id: done, type: end }
`;
};

/** A support-triage variant on its own topic (so tests of one file never take each other's tasks). */
export function triageProcess(o: TriageOpts): string {
  const extra = (o.extra ?? []).map((l) => `\n    ${l}`).join('');
  return `
kind: Process
key: ${o.key}
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    topic: ${o.topic}
    model: gemini-3.6-flash
    fallback_models: [gpt-4.1-mini]
    prompt: Read the message from \${customerId}, look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [crm/get_customer, crm/create_ticket, crm/close_ticket, crm/send_email]
    result_variable: triage
    output_schema: { type: object, required: [ticketId, priority] }
    confidence_threshold: ${o.threshold ?? 80}
    max_attempts: ${o.maxAttempts ?? 3}
    limits: ${o.limits ?? '{ max_turns: 12, max_tokens_total: 60000, budget_usd: 0.50 }'}${extra}
    next: done${o.review ? '\n  - { id: review, type: user_task, candidate_groups: [support], next: done }' : ''}
  - { id: done, type: end }
`;
}

export const GOOD = { triage: { ticketId: 'T-981', priority: 'high', _confidence: 92 } };

/**
 * An engine with a process `key` of two service nodes on `topic` (variable `n`), a worker for the topic,
 * and a pg client on the engine's database for reading history rows directly. close() ends both.
 */
export async function twoServiceSteps(key: string, topic: string, workerId: string) {
  const engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, { s: serviceProcess(key, topic, 2) });
  const w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: [topic] }), workerId);
  const db = new pg.Client({ connectionString: engine.databaseUrl });
  await db.connect();
  return {
    engine,
    w,
    db,
    async close() {
      await db.end();
      await engine.close();
    },
  };
}
