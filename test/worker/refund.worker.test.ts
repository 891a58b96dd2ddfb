/**
 * Seed 000 with real worker processes: the agent proposes the €89 refund, the work parks (no lease, no
 * CRM call); the first worker is stopped; a finance lead approves through GraphQL; ANOTHER worker process
 * resumes from the journal and refunds exactly once with the engine's key. A rejection reaches the model
 * as the tool's answer; an approval with changes runs the edited call and tells the model what changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundScript } from '../../server/demo/scripts.js';
import { Q } from '../helpers/fixtures.js';
import {
  type Harness,
  instance,
  journalOf,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from './helpers.js';

const EDITABLE = (url: string) => `
---
kind: ToolServer
name: crm-edit
transport: streamable-http
url: ${url}
credential: crm-token
tools:
  get_customer: { policy: read }
  refund: { policy: approval_required, idempotency: key, approvers: [finance-leads], editable: true }
---
kind: Process
key: refund-edit
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Help \${customerId}; refund a lost parcel if it is due. Answer in JSON.
    inputs:
      customerId: \${customerId}
    tools: [crm-edit/get_customer, crm-edit/refund]
    result_variable: outcome
    next: done
  - { id: done, type: end }
`;

/** The refund script, speaking to the crm-edit server's function names. */
const script: typeof refundScript = (req) => {
  const edit = req.tools.some((t) => t.function.name.startsWith('crm-edit__'));
  if (!edit) return refundScript(req);
  const rename = (s: string) => s.replaceAll('crm-edit__', 'crm__');
  const back = (s: string) => s.replaceAll('crm__', 'crm-edit__');
  const messages = req.messages.map((m) => ({
    ...m,
    tool_calls: m.tool_calls?.map((c) => ({
      ...c,
      function: { ...c.function, name: rename(c.function.name) },
    })),
  }));
  const a = refundScript({ ...req, messages });
  return 'toolCalls' in a ? { ...a, toolCalls: a.toolCalls.map((c) => ({ ...c, name: back(c.name) })) } : a;
};

let h: Harness;
let lead: string;
const procs: WorkerProcess[] = [];

beforeAll(async () => {
  h = await startHarness({ script });
  await h.engine.ok(h.engine.adminToken, Q.deploy, { s: EDITABLE(h.crm.url).replace(/^\n---\n/, '') });
  lead = await h.engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await h?.close();
});

async function pendingApproval(instanceId: string) {
  return waitFor('an approval to open', async () => {
    const d = await h.engine.ok(lead, Q.approvals, { state: 'PENDING' });
    const edge = d.approvals.edges.find(
      (e: { node: { taskId: string } }) => e.node.taskId && e.node.taskId.length > 0,
    );
    if (!edge) return null;
    const i = await instance(h, instanceId);
    return i.tasks.some((t) => t.id === edge.node.taskId) ? edge.node : null;
  });
}

async function decide(input: Record<string, unknown>) {
  const r = await h.engine.gql(lead, Q.decide, { input });
  expect(r.errors).toBeUndefined();
  return r.data!.decideApproval;
}

const finished = (id: string) =>
  waitFor('the instance to complete', async () => {
    const i = await instance(h, id);
    return i.state === 'COMPLETED' ? i : null;
  });

describe('seed 000 with real worker processes', () => {
  let b: WorkerProcess;

  it('parks, is approved by finance-leads, resumes on another worker and refunds once', async () => {
    const a = spawnWorker(h, 'worker-a');
    procs.push(a);
    const id = await startProcess(h, 'refund', {
      customerId: 'C-42',
      message: 'My parcel 5531 never arrived',
    });
    const approval = await pendingApproval(id);
    expect(approval).toMatchObject({
      toolRef: 'crm/refund',
      arguments: { orderId: '5531', amount: 89, currency: 'EUR' },
      candidateGroups: ['finance-leads'],
      sequence: 5,
    });
    let inst = await instance(h, id);
    expect(inst.tasks[0].state).toBe('AWAITING_APPROVAL');
    expect(h.crm.countCalls('refund')).toBe(0);
    expect(h.model.callCount).toBe(2);
    expect(a.logs.some((l) => l.event === 'task.parked')).toBe(true);

    a.kill('SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    b = spawnWorker(h, 'worker-b');
    procs.push(b);
    await decide({ approvalId: approval.id, decision: 'APPROVE', digest: approval.digest });

    inst = await finished(id);
    expect(inst.variables.outcome).toMatchObject({ refunded: true, refundId: expect.any(String) });
    expect(h.crm.countSideEffects('refund')).toBe(1);
    expect(h.crm.countCalls('refund')).toBe(1);
    expect(h.model.callCount).toBe(3);
    const task = inst.tasks[0];
    // the precondition is read when the refund is proposed (the approver's facts) and right before it runs
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:COMPLETED',
      '1.3:MODEL_CALL:COMPLETED',
      '1.4:TOOL_CALL:COMPLETED:PRECONDITION',
      '1.5:TOOL_CALL:COMPLETED',
      '1.6:TOOL_CALL:COMPLETED:PRECONDITION',
      '1.7:MODEL_CALL:COMPLETED',
    ]);
    expect(h.crm.countCalls('get_order')).toBe(2);
    const refund = h.crm.calls.find((c) => c.tool === 'refund')!;
    expect(refund.headerKey).toBe(task.steps[4].idempotencyKey);
    const started = inst.history.find((e) => e.eventType === 'STEP_STARTED' && e.sequence === 5)!;
    expect(started.actor).toBe('worker:worker-b');
    expect(task.metadata?.attempt).toBe(1);
  }, 40_000);

  it('feeds a rejection to the model as the tool answer; the refund never runs', async () => {
    h.model.reset();
    // order 5531 was refunded above: a second refund would be moot and never reach a person (SPEC §14.2)
    h.crm.reset();
    const before = h.crm.countCalls('refund');
    const id = await startProcess(h, 'refund', { customerId: 'C-42', message: 'Refund please' });
    const approval = await pendingApproval(id);
    const reason = 'Already refunded with a gift card on 12 October.';
    await decide({ approvalId: approval.id, decision: 'REJECT', digest: approval.digest, comment: reason });
    const inst = await finished(id);
    expect(inst.variables.outcome).toEqual({ refunded: false, reason });
    expect(h.crm.countCalls('refund')).toBe(before);
    const last = h.model.calls.at(-1)!.messages.at(-1)!;
    expect(last).toMatchObject({
      role: 'tool',
      content: `Rejected: a person did not approve this call. Reason: ${reason}`,
    });
    expect(journalOf(inst.tasks[0])).toContain('1.5:TOOL_CALL:REJECTED');
  }, 30_000);

  it('runs an approval with changes exactly as edited and tells the model what changed', async () => {
    h.model.reset();
    h.crm.reset();
    const id = await startProcess(h, 'refund-edit', { customerId: 'C-42' });
    const approval = await pendingApproval(id);
    await decide({
      approvalId: approval.id,
      decision: 'APPROVE',
      digest: approval.digest,
      arguments: { orderId: '5531', amount: 50, currency: 'EUR' },
    });
    const inst = await finished(id);
    expect(inst.variables.outcome).toMatchObject({ refunded: true });
    const effect = h.crm.sideEffects.filter((s) => s.tool === 'refund').at(-1)!;
    expect(effect.args).toEqual({ orderId: '5531', amount: 50, currency: 'EUR' });
    const last = h.model.calls.at(-1)!.messages.at(-1)!;
    expect(last.role).toBe('tool');
    expect(String(last.content)).toContain('Note from the approver: Approved with changes by fiona');
    b.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
  }, 30_000);
});
