/**
 * Seed 001's moves with real worker processes, shared by its scenario files: a worker proposes the
 * refund and is stopped (no worker runs while people decide), people decide, a worker comes back.
 */
import { expect } from 'vitest';
import { Q } from '../helpers/fixtures.js';
import { type Harness, instance, spawnWorker, waitFor, type WorkerProcess } from './helpers.js';

export const APPROVAL = `query($id: ID!) { approval(id: $id) {
  id state version digest voidReason facts toolDescription onApproval comment } }`;

export function seed001(h: Harness, procs: WorkerProcess[]) {
  /** The pending approval of an instance's refund (the worker proposed it and let the task go). */
  const pendingOf = (instanceId: string, notId?: string) =>
    waitFor('a pending approval of the instance', async () => {
      const d = await h.engine.ok(h.engine.adminToken, Q.approvals, { state: 'PENDING' });
      const i = await instance(h, instanceId);
      const edge = d.approvals.edges.find(
        (e: { node: { id: string; taskId: string } }) =>
          e.node.id !== notId && i.tasks.some((t) => t.id === e.node.taskId),
      );
      return edge?.node ?? null;
    });

  /** A worker that shows its output when the test fails while it runs. */
  const worker = (name: string) => {
    const w = spawnWorker(h, name);
    procs.push(w);
    return w;
  };

  /** A worker proposes the refund and is stopped; returns the pending approval. */
  async function proposedThenStopped(id: string) {
    const a = worker(`w-${id.slice(0, 6)}-a`);
    const approval = await pendingOf(id);
    a.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
    return approval;
  }

  const decide = async (token: string, approvalId: string, digest: string) => {
    const r = await h.engine.gql(token, Q.decide, { input: { approvalId, decision: 'APPROVE', digest } });
    expect(r.errors).toBeUndefined();
  };

  const settled = (id: string, states = ['COMPLETED']) =>
    waitFor(`the instance to be ${states.join(' or ')}`, async () => {
      const i = await instance(h, id);
      return states.includes(i.state) ? i : null;
    });

  return { pendingOf, worker, proposedThenStopped, decide, settled };
}
