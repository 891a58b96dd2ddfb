/**
 * Seed 001's failure paths that this version covers, with real worker processes, the CRM and the
 * scripted model: an approval is not a permanent permission. No worker runs while people decide (the
 * worker is stopped after it proposes), so the approved call starts only when a worker comes back —
 * after the facts around the approval changed.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundScript } from '../../server/demo/scripts.js';
import { type Harness, spawnWorker, startHarness, startProcess, type WorkerProcess } from './helpers.js';
import { APPROVAL, seed001 } from './seed001.js';

let h: Harness;
let lead: string;
let lena: string;
const procs: WorkerProcess[] = [];
let s: ReturnType<typeof seed001>;

beforeAll(async () => {
  h = await startHarness({ script: refundScript });
  lead = await h.engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
  lena = await h.engine.principal('HUMAN', 'lena', { groups: ['finance-leads'] });
  s = seed001(h, procs);
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await h?.close();
});

const pendingOf = (id: string, notId?: string) => s.pendingOf(id, notId);
const proposedThenStopped = (id: string) => s.proposedThenStopped(id);
const decide = (token: string, approvalId: string, digest: string) => s.decide(token, approvalId, digest);
const completed = (id: string) => s.settled(id);

describe('seed 001 with real worker processes', () => {
  it('the approver left finance-leads before the call ran: VOIDED, a new version, one refund after re-approval', async () => {
    h.model.reset();
    h.crm.reset();
    const refundsBefore = h.crm.countSideEffects('refund');
    const id = await startProcess(h, 'refund', {
      customerId: 'C-42',
      message: 'My parcel 5531 never arrived',
    });
    const first = await proposedThenStopped(id);
    await decide(lead, first.id, first.digest);
    const me = await h.engine.ok(lead, 'query { me { id } }');
    await h.engine.ok(
      h.engine.adminToken,
      'mutation($i: UpdatePrincipalInput!) { updatePrincipal(input: $i) { id } }',
      {
        i: { id: me.me.id, groups: ['finance'] },
      },
    );
    const b = spawnWorker(h, `w-${id.slice(0, 6)}-b`);
    procs.push(b);
    const second = await pendingOf(id, first.id);
    expect((await h.engine.ok(lena, APPROVAL, { id: first.id })).approval).toMatchObject({
      state: 'VOIDED',
      voidReason: 'AUTHORITY',
    });
    expect(second).toMatchObject({ digest: first.digest });
    expect(h.crm.countSideEffects('refund')).toBe(refundsBefore);
    await decide(lena, second.id, second.digest);
    const inst = await completed(id);
    expect(inst.variables.outcome).toMatchObject({ refunded: true });
    expect(h.crm.countSideEffects('refund')).toBe(refundsBefore + 1);
    // the model was not asked again for the reopened approval: two turns before, one after the refund
    expect(h.model.callCount).toBe(3);
    b.kill('SIGTERM');
    await b.exited;
  }, 60_000);

  it('the window passed before a worker came back: EXPIRED, a new version, no model call spent', async () => {
    h.model.reset();
    h.crm.reset();
    const refundsBefore = h.crm.countSideEffects('refund');
    const id = await startProcess(h, 'refund', { customerId: 'C-42', message: 'Still no parcel' });
    const first = await proposedThenStopped(id);
    await decide(lena, first.id, first.digest);
    // a day and a minute later (the demo refund's window is the default, 1440 minutes)
    await h.engine.context.db.execute(
      sql`UPDATE approvals SET decided_at = now() - interval '1441 minutes' WHERE id = ${first.id}`,
    );
    const b = spawnWorker(h, `w-${id.slice(0, 6)}-b`);
    procs.push(b);
    const second = await pendingOf(id, first.id);
    expect((await h.engine.ok(lena, APPROVAL, { id: first.id })).approval.state).toBe('EXPIRED');
    expect((await h.engine.ok(lena, APPROVAL, { id: second.id })).approval.version).toBe(2);
    expect(h.model.callCount).toBe(2);
    await decide(lena, second.id, second.digest);
    await completed(id);
    expect(h.crm.countSideEffects('refund')).toBe(refundsBefore + 1);
    expect(h.model.callCount).toBe(3);
    b.kill('SIGTERM');
    await b.exited;
  }, 60_000);

  it('revoked before the call ran: no refund, and the model reads the reason', async () => {
    h.model.reset();
    h.crm.reset();
    const refundsBefore = h.crm.countSideEffects('refund');
    const id = await startProcess(h, 'refund', { customerId: 'C-42', message: 'Refund please' });
    const approval = await proposedThenStopped(id);
    await decide(lena, approval.id, approval.digest);
    const reason = 'The customer found the parcel.';
    await h.engine.ok(lena, 'mutation($i: RevokeApprovalInput!) { revokeApproval(input: $i) { id } }', {
      i: { approvalId: approval.id, comment: reason },
    });
    const b = spawnWorker(h, `w-${id.slice(0, 6)}-b`);
    procs.push(b);
    await completed(id);
    expect(h.crm.countSideEffects('refund')).toBe(refundsBefore);
    const last = h.model.calls.at(-1)!.messages.at(-1)!;
    expect(last).toMatchObject({
      role: 'tool',
      content: `Rejected: a person did not approve this call. Reason: Approval revoked by lena: ${reason}`,
    });
    b.kill('SIGTERM');
    await b.exited;
  }, 60_000);
});
