/**
 * The authorization matrix: every Query, Mutation and Subscription field, called by anon, a worker, a human in the
 * candidate groups, one outside them, an admin, another project's admin, and a cookie session from the OpenID
 * Provider in the candidate groups (it fares as humanIn). A = allowed (no UNAUTHENTICATED / FORBIDDEN), D =
 * refused (UNAUTHENTICATED or FORBIDDEN), N = invisible (null or NOT_FOUND: other projects' ids reveal nothing).
 */
import { isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wsClient } from '../../server/client/index.js';
import { schema } from '../../server/graphql/schema/index.js';
import type { TestEngine } from '../helpers/engine.js';
import { type OidcStack, startOidcStack } from '../helpers/oidc.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

import { type Ids, MATRIX, type Who, WHO } from './authz.rows.js';

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

function outcome(
  r: { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] },
  field: string,
): string {
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
      const root = schema.getType(type);
      const fields = Object.keys(isObjectType(root) ? root.getFields() : {});
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
