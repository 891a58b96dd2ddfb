/**
 * The authorization matrix: every Query, Mutation and Subscription field, called by anon, a worker, a human in the
 * candidate groups, one outside them, an admin, another project's admin, and a cookie session from the OpenID
 * Provider in the candidate groups (it fares as humanIn). A = allowed (no UNAUTHENTICATED / FORBIDDEN), D =
 * refused (UNAUTHENTICATED or FORBIDDEN), N = invisible (null or NOT_FOUND: other projects' ids reveal nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wsClient } from '../../server/client/index.js';
import { schema } from '../../server/graphql/schema/index.js';
import type { TestEngine } from '../helpers/engine.js';
import { type OidcStack, startOidcStack } from '../helpers/oidc.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

type Who = 'anon' | 'worker' | 'humanIn' | 'humanOut' | 'admin' | 'other';
const WHO: Who[] = ['anon', 'worker', 'humanIn', 'humanOut', 'admin', 'other'];
type Row = { op: (ids: Ids) => { query: string; variables?: Record<string, unknown> }; expect: string };
interface Ids {
  instanceId: string;
  taskId: string;
  approvalId: string;
  digest: string;
  incidentId: string;
  userTaskId: string;
  /** a human of the default project, for updatePrincipal and rotatePrincipalToken */
  principalId: string;
  /** another one, for disablePrincipal */
  disableId: string;
}

const EVIDENCE =
  'query($id: ID!) { approval(id: $id) { id facts toolDescription impact onApproval basis { modelText } } }';
// expect: one letter per caller, in the order of WHO.
const MATRIX: Record<string, Record<string, Row>> = {
  Query: {
    me: { op: () => ({ query: '{ me { id } }' }), expect: 'DAAAAA' },
    definitions: { op: () => ({ query: '{ definitions { id } }' }), expect: 'DAAAAA' },
    toolServers: { op: () => ({ query: '{ toolServers { id } }' }), expect: 'DAAAAA' },
    processInstance: {
      op: (i) => ({
        query: 'query($id: ID!) { processInstance(id: $id) { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DAAAAN',
    },
    processInstances: { op: () => ({ query: '{ processInstances { totalCount } }' }), expect: 'DAAAAA' },
    externalTask: {
      op: (i) => ({ query: 'query($id: ID!) { externalTask(id: $id) { id } }', variables: { id: i.taskId } }),
      expect: 'DAAAAN',
    },
    approvals: { op: () => ({ query: '{ approvals { totalCount } }' }), expect: 'DDAAAA' },
    // the evidence (SPEC §11) is the approval's: whoever may not see the approval sees none of it
    approval: { op: (i) => ({ query: EVIDENCE, variables: { id: i.approvalId } }), expect: 'DNANAN' },
    incidents: { op: () => ({ query: '{ incidents { totalCount } }' }), expect: 'DAAAAA' },
    eventCursor: { op: () => ({ query: '{ eventCursor }' }), expect: 'DAAAAA' },
    principals: { op: () => ({ query: '{ principals { totalCount } }' }), expect: 'DDDDAA' },
    workers: { op: () => ({ query: '{ workers { workerId } }' }), expect: 'DAAAAA' },
    toolCredential: {
      op: (i) => ({
        query: 'query($t: ID!) { toolCredential(taskId: $t, server: "crm", workerId: "nobody") { secret } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    webhookSubscriptions: { op: () => ({ query: '{ webhookSubscriptions { id } }' }), expect: 'DDDDAA' },
    dailyStats: { op: () => ({ query: '{ dailyStats { from approvals { opened } } }' }), expect: 'DDAAAA' },
    webhookDeliveries: { op: () => ({ query: '{ webhookDeliveries { id } }' }), expect: 'DDDDAA' },
    verifyAudit: {
      op: (i) => ({
        query: 'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DAAAAN',
    },
  },
  Mutation: {
    createPrincipal: {
      op: () => ({ query: 'mutation { createPrincipal(input: {kind: HUMAN, name: "x"}) { token } }' }),
      expect: 'DDDDAA',
    },
    // another project's admin does not see the default project's principals → NOT_FOUND
    updatePrincipal: {
      op: (i) => ({
        query: 'mutation($id: ID!) { updatePrincipal(input: {id: $id, groups: ["support"]}) { id } }',
        variables: { id: i.principalId },
      }),
      expect: 'DDDDAN',
    },
    disablePrincipal: {
      op: (i) => ({
        query: 'mutation($id: ID!) { disablePrincipal(id: $id) { id } }',
        variables: { id: i.disableId },
      }),
      expect: 'DDDDAN',
    },
    rotatePrincipalToken: {
      op: (i) => ({
        query: 'mutation($id: ID!) { rotatePrincipalToken(id: $id) { token } }',
        variables: { id: i.principalId },
      }),
      expect: 'DDDDAN',
    },
    deploy: {
      op: () => ({ query: 'mutation { deploy(source: "kind: Nope") { definitions { id } } }' }),
      expect: 'DDDDAA',
    },
    setCredential: {
      op: () => ({ query: 'mutation { setCredential(name: "n", secret: "s") }' }),
      expect: 'DDDDAA',
    },
    // other project: support-triage is not deployed there → NOT_FOUND
    startProcess: {
      op: () => ({
        query: 'mutation { startProcess(key: "support-triage", variables: {customerId: "C-1"}) { id } }',
      }),
      expect: 'DDAAAN',
    },
    cancelProcess: {
      op: (i) => ({
        query: 'mutation($id: ID!) { cancelProcess(id: $id, reason: "r") { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DDDDAN',
    },
    suspendProcess: {
      op: (i) => ({
        query: 'mutation($id: ID!) { suspendProcess(id: $id) { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DDDDAN',
    },
    resumeProcess: {
      op: (i) => ({
        query: 'mutation($id: ID!) { resumeProcess(id: $id) { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DDDDAN',
    },
    registerWorker: {
      op: () => ({
        query: 'mutation { registerWorker(input: {workerId: "m", topics: ["abada:agent"]}) { workerId } }',
      }),
      expect: 'DADDDD',
    },
    fetchAndLock: {
      op: () => ({
        query:
          'mutation { fetchAndLock(input: {workerId: "m", maxTasks: 1, topics: [{topicName: "notify", lockDurationMs: 1000}]}) { id } }',
      }),
      expect: 'DADDDD',
    },
    extendLock: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { extendLock(input: {taskId: $t, workerId: "m", lockDurationMs: 1000}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    journalStep: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { journalStep(input: {taskId: $t, workerId: "m", attempt: 1, sequence: 1, kind: MODEL_CALL, state: STARTED, model: "x", request: {}}) { reused } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    journalSteps: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { journalSteps(input: {taskId: $t, workerId: "m", attempt: 1, steps: [{sequence: 1, kind: MODEL_CALL, state: STARTED, model: "x", request: {}}]}) { reused } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    completeTask: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { completeTask(input: {taskId: $t, workerId: "m", attempt: 1, variables: {}, metadata: {}}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    failTask: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { failTask(input: {taskId: $t, workerId: "m", attempt: 1, errorType: "X"}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    decideApproval: {
      op: (i) => ({
        query:
          'mutation($a: ID!, $d: String!) { decideApproval(input: {approvalId: $a, decision: REJECT, comment: "matrix", digest: $d}) { id } }',
        variables: { a: i.approvalId, d: i.digest },
      }),
      // another project's admin is refused as an admin before the id is even looked up
      expect: 'DDADDD',
    },
    revokeApproval: {
      op: (i) => ({
        query: 'mutation($a: ID!) { revokeApproval(input: {approvalId: $a, comment: "matrix"}) { id } }',
        variables: { a: i.approvalId },
      }),
      // only a person who decided it (none has, here) or an admin: the candidate human is refused too
      expect: 'DDDDAN',
    },
    resolveIncident: {
      op: (i) => ({
        query: 'mutation($id: ID!) { resolveIncident(input: {id: $id, comment: "checked"}) { id } }',
        variables: { id: i.incidentId },
      }),
      expect: 'DDAAAN',
    },
    completeUserTask: {
      op: (i) => ({
        query: 'mutation($id: ID!) { completeUserTask(id: $id) { id } }',
        variables: { id: i.userTaskId },
      }),
      expect: 'DDADAN',
    },
    createWebhookSubscription: {
      op: () => ({
        query:
          'mutation { createWebhookSubscription(input: {url: "http://127.0.0.1:9/hook", events: ["approval.opened"]}) { secret } }',
      }),
      expect: 'DDDDAA',
    },
    deleteWebhookSubscription: {
      op: () => ({
        query: 'mutation { deleteWebhookSubscription(id: "00000000-0000-0000-0000-000000000000") }',
      }),
      expect: 'DDDDNN',
    },
    retryTask: {
      op: (i) => ({ query: 'mutation($id: ID!) { retryTask(id: $id) { id } }', variables: { id: i.taskId } }),
      expect: 'DDDDAN',
    },
  },
  Subscription: {
    approvalOpened: { op: () => ({ query: 'subscription { approvalOpened { id } }' }), expect: 'DAAAAA' },
    approvalChanged: { op: () => ({ query: 'subscription { approvalChanged { id } }' }), expect: 'DAAAAA' },
    taskChanged: { op: () => ({ query: 'subscription { taskChanged { id } }' }), expect: 'DAAAAA' },
    incidentOpened: { op: () => ({ query: 'subscription { incidentOpened { id } }' }), expect: 'DAAAAA' },
  },
};

let engine: TestEngine;
let oidc: OidcStack;
let jar: Awaited<ReturnType<OidcStack['signIn']>>;
const tokens: Partial<Record<Who, string | null>> = { anon: null };
let ids: Ids;

beforeAll(async () => {
  oidc = await startOidcStack(); // the same engine, with a real OpenID Provider for the cookie caller
  engine = oidc.engine;
  jar = await oidc.signIn('fiona');
  const REVIEW = `
kind: Process
key: review-only
start: review
nodes:
  - { id: review, type: user_task, candidate_groups: [finance], next: done }
  - { id: done, type: end }
`;
  const { worker } = await setupSeeds(engine, `---${REVIEW}`);
  tokens.worker = worker;
  tokens.humanIn = await engine.principal('HUMAN', 'fiona', { groups: ['finance', 'finance-leads'] });
  tokens.humanOut = await engine.principal('HUMAN', 'sam', { groups: ['support'] });
  tokens.admin = engine.adminToken;
  tokens.other = await engine.principal('ADMIN', 'other-admin', { projectId: 'other' });
  // An instance waiting for finance-leads on a refund, an open incident, an open user task.
  const inst = (await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } }))
    .startProcess;
  const w = new WorkerSim(engine, worker);
  const task = await w.fetchOne();
  await w.model(task, 1, 'STARTED');
  await w.model(task, 1, 'COMPLETED');
  await w.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89, currency: 'EUR' });
  const approval = (await engine.ok(engine.adminToken, Q.approvals, { state: 'PENDING' })).approvals.edges[0]
    .node;
  await engine.gql(tokens.humanOut!, Q.fetch, {
    input: { workerId: 'x', maxTasks: 1, topics: [{ topicName: 'abada:agent', lockDurationMs: 1000 }] },
  });
  const badWorker = await engine.principal('WORKER', 'narrow', { topics: ['notify'] });
  await engine.gql(badWorker, Q.fetch, {
    input: {
      workerId: 'narrow-1',
      maxTasks: 1,
      topics: [{ topicName: 'abada:agent', lockDurationMs: 1000 }],
    },
  });
  const incident = (
    await engine.ok(engine.adminToken, '{ incidents(state: OPEN) { edges { node { id type } } } }')
  ).incidents.edges[0].node;
  const ut = (await engine.ok(engine.adminToken, Q.start, { key: 'review-only' })).startProcess;
  const userTaskId = (
    await engine.ok(engine.adminToken, 'query($id: ID!) { processInstance(id: $id) { userTasks { id } } }', {
      id: ut.id,
    })
  ).processInstance.userTasks[0].id;
  ids = {
    instanceId: inst.id,
    taskId: task.id,
    approvalId: approval.id,
    digest: approval.digest,
    incidentId: incident.id,
    userTaskId,
    principalId: await principalIdOf(await engine.principal('HUMAN', 'matrix-target', { groups: ['x'] })),
    disableId: await principalIdOf(await engine.principal('HUMAN', 'matrix-disabled', { groups: ['x'] })),
  };
});
afterAll(() => oidc?.close());

async function principalIdOf(token: string): Promise<string> {
  return (await engine.ok(token, '{ me { id } }')).me.id;
}

function outcome(r: { data: any; errors?: { extensions?: { code?: string } }[] }, field: string): string {
  const code = r.errors?.[0]?.extensions?.code;
  if (code === 'UNAUTHENTICATED' || code === 'FORBIDDEN') return 'D';
  if (code === 'NOT_FOUND') return 'N';
  if (!code && r.data && r.data[field] === null) return 'N';
  return 'A';
}

/**
 * How long a subscription is watched for a refusal before it counts as allowed (an allowed one sends nothing
 * until an event). A refusal comes first, from the connection's token check (close 4403) or the field's auth
 * scope: one handshake and one lookup, tens of ms even on a loaded machine, so 700 ms does not miss one. */
const REFUSAL_WITHIN_MS = 700;

async function subscribeOutcome(token: string | null, query: string, cookie = false): Promise<string> {
  return new Promise((resolve) => {
    const client = cookie ? oidc.wsClient(jar) : wsClient(engine.url, token, { retryAttempts: 0 }); // lazy
    let settled = false;
    const done = (v: string) => {
      if (settled) return;
      settled = true;
      void client.dispose();
      resolve(v);
    };
    client.subscribe(
      { query },
      {
        next: () => {},
        error: (e: unknown) =>
          done(
            JSON.stringify(e).includes('FORBIDDEN') ||
              JSON.stringify(e).includes('UNAUTH') ||
              (e as { code?: number }).code === 4403
              ? 'D'
              : 'A',
          ),
        complete: () => done('A'),
      },
    );
    // A live subscription that has not errored within the window is allowed.
    setTimeout(() => done('A'), REFUSAL_WITHIN_MS);
  });
}

describe('authorization matrix', () => {
  it('has a row for every field of the schema', () => {
    for (const type of ['Query', 'Mutation', 'Subscription'] as const) {
      const fields = Object.keys(
        schema.getType(type) && 'getFields' in schema.getType(type)!
          ? (schema.getType(type) as any).getFields()
          : {},
      );
      expect(
        fields.filter((f) => !MATRIX[type][f]),
        `${type} fields without a row`,
      ).toEqual([]);
    }
  });

  for (const type of ['Query', 'Mutation'] as const) {
    for (const [field, row] of Object.entries(MATRIX[type])) {
      it(`${type}.${field}: ${row.expect}`, async () => {
        const got: string[] = [];
        for (const who of WHO) {
          const { query, variables } = row.op(ids);
          got.push(outcome(await engine.gql(tokens[who] ?? null, query, variables), field));
        }
        got.push(outcome(await oidc.gql(jar, row.op(ids).query, row.op(ids).variables), field));
        expect(got.join('')).toBe(row.expect + row.expect[2]);
      });
    }
  }
  for (const [field, row] of Object.entries(MATRIX.Subscription)) {
    it(`Subscription.${field}: ${row.expect}`, async () => {
      const got: string[] = [];
      for (const who of WHO) got.push(await subscribeOutcome(tokens[who] ?? null, row.op(ids).query));
      got.push(await subscribeOutcome(null, row.op(ids).query, true));
      expect(got.join('')).toBe(row.expect + row.expect[2]);
    });
  }
});
