/**
 * The client's approval documents for integrators, against a real engine: ApprovalOpened over graphql-ws
 * delivers a proposal, PendingApprovals lists it, DecideApproval with a person's own token approves it,
 * and ApprovalChanged delivers the decision — the flow docs/custom-worker.md describes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalChanged,
  ApprovalOpened,
  createClient,
  DecideApproval,
  PendingApprovals,
  type ResultOf,
  subscribe,
  wsClient,
} from '../../server/client/index.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { STARTED_MS, settle } from '../helpers/ws.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine?.close());

type Approval = ResultOf<typeof ApprovalOpened>['approvalOpened'];

describe('approval documents of abada/client', () => {
  it('sees a proposal live, lists it, decides it with a person’s token, and sees the decision', async () => {
    const { worker } = await setupSeeds(engine);
    const fiona = await engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
    const ws = wsClient(engine.url, fiona);
    const opened: Approval[] = [];
    const changed: Approval[] = [];
    const sink = (into: Approval[], pick: (d: never) => Approval) => ({
      next: (r: { data?: unknown }) => {
        if (r.data) into.push(pick(r.data as never));
      },
      error: (e: unknown) => {
        throw e;
      },
      complete: () => {},
    });
    const stops = [
      subscribe(
        ws,
        ApprovalOpened,
        {},
        sink(opened, (d: ResultOf<typeof ApprovalOpened>) => d.approvalOpened),
      ),
      subscribe(
        ws,
        ApprovalChanged,
        {},
        sink(changed, (d: ResultOf<typeof ApprovalChanged>) => d.approvalChanged),
      ),
    ];
    try {
      await settle(STARTED_MS); // graphql-ws acknowledges the connection, not the subscription

      const sim = new WorkerSim(engine, worker, 'documents-sim');
      await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
      const task = await sim.fetchOne();
      await sim.model(task, 1, 'STARTED');
      await sim.model(task, 1, 'COMPLETED');
      await sim.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89 });

      const live = await waitFor('approvalOpened', async () => opened[0]);
      expect(live).toMatchObject({ state: 'PENDING', toolRef: 'crm/refund', taskId: task.id });

      const client = createClient({ url: engine.url, token: fiona });
      const pending = await client.request(PendingApprovals, { mine: true, first: 10 });
      expect(pending.approvals.edges.map((e) => e.node.id)).toContain(live.id);

      const decided = await client.request(DecideApproval, {
        input: { approvalId: live.id, decision: 'APPROVE', digest: live.digest, comment: 'order checked' },
      });
      expect(decided.decideApproval).toMatchObject({ id: live.id, state: 'APPROVED', decidedBy: 'fiona' });
      const change = await waitFor('approvalChanged', async () => changed.find((c) => c.id === live.id));
      expect(change.state).toBe('APPROVED');
    } finally {
      for (const stop of stops) stop();
      await ws.dispose();
    }
  });
});
