/**
 * The authorization matrix of the event stream (SPEC §13), beside authz.matrix.test.ts: a replay
 * (`after:` the start of the stream) shows each caller exactly what live shows, and `eventCursor` on an
 * approval or incident is readable by whoever may read the object. Callers, in order: anonymous, a
 * worker, a human in the candidate groups, a human outside them, an admin, another project's admin.
 *   R = replays the fixture's approval or incident, 0 = replays nothing, D = refused;
 *   A = the query answers with a cursor, N = invisible (null or NOT_FOUND).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wsClient } from '../../server/client/index.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

let engine: TestEngine;
let who: (string | null)[] = [];
let approvalId: string;

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  who = [
    null,
    worker,
    await engine.principal('HUMAN', 'fiona', { groups: ['finance', 'finance-leads'] }),
    await engine.principal('HUMAN', 'sam', { groups: ['support'] }),
    engine.adminToken,
    await engine.principal('ADMIN', 'other-admin', { projectId: 'other' }),
  ];
  // A refund waiting for finance-leads, and an incident (a fetch for a topic the worker may not take).
  await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
  const w = new WorkerSim(engine, worker);
  const task = await w.fetchOne();
  await w.model(task, 1, 'STARTED');
  await w.model(task, 1, 'COMPLETED');
  await w.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89, currency: 'EUR' });
  approvalId = (await engine.ok(engine.adminToken, Q.approvals, { state: 'PENDING' })).approvals.edges[0].node
    .id;
  const narrow = await engine.principal('WORKER', 'narrow', { topics: ['notify'] });
  await engine.gql(narrow, Q.fetch, {
    input: {
      workerId: 'narrow-1',
      maxTasks: 1,
      topics: [{ topicName: 'abada:agent', lockDurationMs: 1000 }],
    },
  });
});
afterAll(() => engine?.close());

/** How long a replay is watched: it is read before the subscription starts, so it comes at once. */
const REPLAY_WITHIN_MS = 700;

async function replayOutcome(token: string | null, query: string): Promise<string> {
  return new Promise((resolve) => {
    const client = wsClient(engine.url, token, { retryAttempts: 0, lazy: true });
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
        next: (r) => done(r.errors?.length ? JSON.stringify(r.errors) : 'R'),
        error: () => done('D'),
        complete: () => done('0'),
      },
    );
    setTimeout(() => done('0'), REPLAY_WITHIN_MS);
  });
}

const REPLAY: Record<string, string> = {
  'approvalOpened(after: "v1.0") { id eventCursor }': 'D0R0R0',
  'approvalChanged(after: "v1.0") { id eventCursor }': 'D00000',
  'incidentOpened(after: "v1.0") { id eventCursor }': 'D0RRR0',
};

describe('authorization of the event stream', () => {
  for (const [selection, expected] of Object.entries(REPLAY)) {
    it(`Subscription.${selection}: ${expected}`, async () => {
      const got: string[] = [];
      for (const token of who) got.push(await replayOutcome(token, `subscription { ${selection} }`));
      expect(got.join('')).toBe(expected);
    });
  }

  it('Approval.eventCursor and Incident.eventCursor: whoever may read the object', async () => {
    const got: string[] = [];
    for (const token of who) {
      const r = await engine.gql(token, 'query($id: ID!) { approval(id: $id) { eventCursor } }', {
        id: approvalId,
      });
      const code = r.errors?.[0]?.extensions?.code;
      got.push(
        code === 'UNAUTHENTICATED' || code === 'FORBIDDEN' ? 'D' : r.data?.approval?.eventCursor ? 'A' : 'N',
      );
    }
    expect(got.join('')).toBe('DNANAN');
    const incidents = await engine.ok(engine.adminToken, '{ incidents { edges { node { eventCursor } } } }');
    expect(incidents.incidents.edges[0].node.eventCursor).toMatch(/^v1\.[1-9]\d*$/);
    const other = await engine.ok(who[5], '{ incidents { totalCount } }');
    expect(other.incidents.totalCount).toBe(0);
  });
});
