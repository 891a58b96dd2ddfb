/**
 * seeds/000 end to end through GraphQL: the agent reads Alice, proposes a €89 refund; the engine parks the
 * work without a lease and opens an approval for finance-leads; a finance lead approves the exact digest;
 * another worker resumes, may run only the approved call (890 is DIVERGENT_STEP), gets the idempotency
 * key and completes. The reject path feeds the comment back and never lets the call start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { json, Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { D, decide, historyOf, taskOf, tool, toolRaw } from '../engine/approvals/setup.js';

let engine: TestEngine;
let w1: WorkerSim;
let w2: WorkerSim;
let lead: string;

const ALICE = { orderId: '5531', amount: 89, currency: 'EUR' };
/** The order as crm/get_order answers it before any refund. */
const ORDER = { orderId: '5531', status: 'lost_parcel', amount: 89, currency: 'EUR', refundedAmount: 0 };

/** The refund's precondition read (crm/get_order), journaled as the step after the approved call. */
const precondition = (
  w: WorkerSim,
  task: { id: string; attempt: number },
  sequence: number,
  args: Record<string, unknown>,
  response: unknown,
) =>
  w.engine.gql(
    w.token,
    `mutation($input: JournalStepInput!) { journalStep(input: $input) { step { sequence state purpose } } }`,
    {
      input: {
        taskId: task.id,
        workerId: w.workerId,
        attempt: task.attempt,
        sequence,
        kind: 'TOOL_CALL',
        state: 'COMPLETED',
        toolRef: 'crm/get_order',
        purpose: 'PRECONDITION',
        request: { callId: `pre_${sequence}`, arguments: args },
        response,
      },
    },
  );

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  const other = await engine.principal('WORKER', 'agent-worker-2', { topics: ['abada:agent'] });
  w1 = new WorkerSim(engine, worker, 'agent-worker-1');
  w2 = new WorkerSim(engine, other, 'agent-worker-2');
  lead = await engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
});
afterAll(() => engine?.close());

/** Steps 1-3 of the seed: the model reads Alice's record, then asks for the refund. */
async function untilProposal() {
  const started = await engine.ok(engine.adminToken, Q.start, {
    key: 'refund',
    v: { customerId: 'C-42', message: 'My parcel 5531 never arrived' },
  });
  const task = await w1.fetchOne();
  expect(task.processInstanceId).toBe(started.startProcess.id);
  await w1.model(task, 1, 'STARTED');
  await w1.model(task, 1, 'COMPLETED');
  await w1.tool(task, 2, 'crm/get_customer', 'COMPLETED', { customerId: 'C-42' }, { name: 'Alice' });
  await w1.model(task, 3, 'STARTED');
  await w1.model(task, 3, 'COMPLETED');
  const proposed = await tool(w1, task, 4, 'crm/refund', 'PROPOSED', ALICE);
  return { instanceId: started.startProcess.id as string, task, proposed };
}

describe('seed 000: a refund that needs approval', () => {
  it('parks the proposal, lets finance-leads approve the exact digest, resumes on another worker', async () => {
    const t0 = Date.now();
    const { instanceId, task, proposed } = await untilProposal();
    expect(proposed.taskState).toBe('AWAITING_APPROVAL');
    expect(proposed.idempotencyKey).toBeNull();
    expect(proposed.step).toMatchObject({ sequence: 4, state: 'PROPOSED' });
    const digest = proposed.step.digest;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const approvalId = proposed.step.approvalId!;

    // The lease went back with the proposal; no worker can take the task while it waits.
    const parked = await taskOf(engine, task.id);
    expect(parked).toMatchObject({ state: 'AWAITING_APPROVAL', lockExpiresAt: null });
    expect(await w2.fetch({ waitMs: 0 })).toEqual([]);
    expect(await w1.fetch({ waitMs: 0 })).toEqual([]);
    // Nor journal on it: it holds no lease.
    expect(codeOf(await toolRaw(w1, task, 4, 'crm/refund', 'STARTED', ALICE))).toBe('LEASE_NOT_HELD');

    const a = (await engine.ok(lead, D.approval, { id: approvalId })).approval;
    expect(a).toMatchObject({
      state: 'PENDING',
      processKey: 'refund',
      proposalVersion: 1,
      toolRef: 'crm/refund',
      server: 'crm',
      tool: 'refund',
      nodeId: 'triage',
      model: 'gemini-3.6-flash',
      attempt: 1,
      sequence: 4,
      arguments: ALICE,
      redactedPaths: [],
      digest,
      candidateGroups: ['finance-leads'],
      level: 1,
      levels: 1,
      escalated: false,
      decidedBy: null,
      processInstanceId: instanceId,
      taskId: task.id,
      decisions: [],
      earlierProposals: [],
    });
    const due = new Date(a!.slaDueAt!).getTime();
    expect(Math.abs(due - (t0 + 4 * 3600_000))).toBeLessThan(60_000);

    const decided = await decide(engine, lead, { approvalId, decision: 'APPROVE', digest });
    expect(decided.errors).toBeUndefined();
    expect(decided.data!.decideApproval).toMatchObject({ state: 'APPROVED', decidedBy: 'fiona', digest });
    expect(await taskOf(engine, task.id)).toMatchObject({ state: 'OPEN' });

    // Another worker takes it; the journal shows step 4 APPROVED with the exact arguments.
    const resumed = await w2.fetchOne();
    expect(resumed.id).toBe(task.id);
    expect(resumed.attempt).toBe(1);
    expect(resumed.steps.map((s) => `${s.sequence}:${s.kind}:${s.state}`)).toEqual([
      '1:MODEL_CALL:COMPLETED',
      '2:TOOL_CALL:COMPLETED',
      '3:MODEL_CALL:COMPLETED',
      '4:TOOL_CALL:APPROVED',
    ]);
    expect(json(resumed.steps[3].request).arguments).toEqual(ALICE);
    // The person approved 89, not 890.
    const divergent = await toolRaw(w2, resumed, 4, 'crm/refund', 'STARTED', { ...ALICE, amount: 890 });
    expect(codeOf(divergent)).toBe('DIVERGENT_STEP');
    // The refund declares a precondition (SPEC §11): it starts only right after the order is read again.
    const unread = await toolRaw(w2, resumed, 4, 'crm/refund', 'STARTED', ALICE);
    expect(codeOf(unread)).toBe('PRECONDITION_REQUIRED');
    const otherOrder = await precondition(w2, resumed, 5, { orderId: '6002' }, ORDER);
    expect(codeOf(otherOrder)).toBe('DIVERGENT_STEP');
    const read = await precondition(w2, resumed, 5, { orderId: '5531' }, ORDER);
    expect(read.errors).toBeUndefined();
    const started = await tool(w2, resumed, 4, 'crm/refund', 'STARTED', ALICE);
    expect(started.step.state).toBe('STARTED');
    expect(started.idempotencyKey).toMatch(/^abada-[0-9a-f]{40}$/);
    const done = await tool(w2, resumed, 4, 'crm/refund', 'COMPLETED', ALICE, { refunded: true });
    expect(done.step.state).toBe('COMPLETED');
    expect(done.idempotencyKey).toBe(started.idempotencyKey);
    // the next step follows the read: 6
    await w2.model(resumed, 6, 'STARTED');
    await w2.model(resumed, 6, 'COMPLETED');
    expect((await w2.complete(resumed, { outcome: { refunded: 89 } })).state).toBe('COMPLETED');

    const d = await engine.ok(engine.adminToken, D.history, { id: instanceId });
    expect(d.processInstance).toMatchObject({ state: 'COMPLETED' });
    const history = await historyOf(engine, instanceId);
    expect(history.map((h) => h.eventType)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'APPROVAL_OPENED',
      'STEP_PROPOSED',
      'APPROVAL_APPROVED',
      'STEP_APPROVED',
      'TASK_LEASED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    const pre = history.find((h) => h.eventType === 'STEP_COMPLETED' && h.sequence === 5)!;
    expect(pre.data).toMatchObject({ toolRef: 'crm/get_order' });
    const opened = history.find((h) => h.eventType === 'APPROVAL_OPENED')!;
    expect(opened).toMatchObject({ actor: 'engine', approvalId, sequence: 4 });
    expect(opened.data).toMatchObject({ toolRef: 'crm/refund', digest, candidateGroups: ['finance-leads'] });
    const approved = history.find((h) => h.eventType === 'APPROVAL_APPROVED')!;
    expect(approved.actor).toMatch(/^human:fiona#[0-9a-f-]{36}$/);
    expect(approved).toMatchObject({ approvalId, taskId: task.id, attempt: 1, sequence: 4 });
    expect(approved.data).toMatchObject({ digest, decidedOn: digest });
    expect(new Date(approved.at).getTime()).toBeGreaterThanOrEqual(t0 - 1000);
    expect(history.filter((h) => h.eventType === 'TASK_LEASED').map((h) => h.actor)).toEqual([
      'worker:agent-worker-1',
      'worker:agent-worker-2',
    ]);
    expect(json(history.find((h) => h.eventType === 'STEP_STARTED' && h.sequence === 4)?.data).digest).toBe(
      digest,
    );
    const audit = await engine.ok(
      engine.adminToken,
      `query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows events } }`,
      { id: instanceId },
    );
    // every event verified; a commit's events for the instance share one chained row
    expect(audit.verifyAudit).toEqual({
      valid: true,
      rows: new Set(history.map((h) => h.row)).size,
      events: history.length,
    });
  });

  it('a rejection needs a comment, reaches the agent, and the call can never start', async () => {
    const { instanceId, task, proposed } = await untilProposal();
    const approvalId = proposed.step.approvalId!;
    const digest = proposed.step.digest;
    const bare = await decide(engine, lead, { approvalId, decision: 'REJECT', digest });
    expect(codeOf(bare)).toBe('COMMENT_REQUIRED');
    const blank = await decide(engine, lead, { approvalId, decision: 'REJECT', digest, comment: '  ' });
    expect(codeOf(blank)).toBe('COMMENT_REQUIRED');
    const reason = 'Already refunded with a gift card on 12 October.';
    const r = await decide(engine, lead, { approvalId, decision: 'REJECT', digest, comment: reason });
    expect(r.errors).toBeUndefined();
    expect(r.data!.decideApproval).toMatchObject({ state: 'REJECTED', decidedBy: 'fiona', comment: reason });
    expect(await taskOf(engine, task.id)).toMatchObject({ state: 'OPEN' });

    const resumed = await w2.fetchOne();
    expect(resumed.id).toBe(task.id);
    expect(resumed.steps[3]).toMatchObject({ sequence: 4, state: 'REJECTED', comment: reason });
    const again = await toolRaw(w2, resumed, 4, 'crm/refund', 'STARTED', ALICE);
    expect(codeOf(again)).toBe('APPROVAL_REQUIRED');
    // The model carries on with the rejection as the tool's answer, and answers without a refund.
    await w2.model(resumed, 5, 'STARTED');
    await w2.model(resumed, 5, 'COMPLETED');
    await w2.complete(resumed, { outcome: { refunded: 0 } });

    const history = await historyOf(engine, instanceId);
    expect(history.map((h) => h.eventType).slice(8)).toEqual([
      'APPROVAL_OPENED',
      'STEP_PROPOSED',
      'APPROVAL_REJECTED',
      'STEP_REJECTED',
      'TASK_LEASED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    const rejected = history.find((h) => h.eventType === 'APPROVAL_REJECTED')!;
    expect(rejected.actor).toMatch(/^human:fiona#/);
    expect(rejected.data).toMatchObject({ digest, decidedOn: digest });
    // COMMENT_REQUIRED refusals leave the approval untouched and record no decision.
    const a = (await engine.ok(lead, D.approval, { id: approvalId })).approval;
    expect(a!.decisions.map((x) => [x.decision, x.outcome, x.comment])).toEqual([
      ['REJECT', 'ACCEPTED', reason],
    ]);
  });
});
