/**
 * The timeout boundary of an agent node (SPEC §15.4): N minutes after the node was entered the timer
 * sweep retires its work — a pending approval retired, a running child cancelled, a write left STARTED
 * OUTCOME_UNKNOWN with its incident and never re-sent — writes BOUNDARY_TIMEOUT and moves the token to
 * on_timeout. A suspended instance's boundary fires at the resume. Engines sweeping together fire each
 * boundary once, and a completion racing the sweep either wins or is WORK_RETIRED, never both.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSweeps } from '../../../server/engine/approvals/index.js';
import { sweepBoundaries } from '../../../server/engine/instances/index.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { json } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/wait.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { decide, tool } from '../approvals/setup.js';
import { deployBoundaries, eventsOf, start, taskRow, untilDue } from './boundary.setup.js';
import { D, TICKET, auditOk, incidentsOf, instance, taskOf } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;
let finance: string;

// 0.01 minutes = 0.6 s; the sweep runs only when a test calls it, so nothing fires before a test is ready
const QUICK = 0.01;

beforeAll(async () => {
  engine = await startTestEngine({ env: { ABADA_SLA_SWEEP_INTERVAL_MS: '100' } });
  await deployBoundaries(engine, {
    'bnd-approval': { timeout: QUICK },
    'bnd-child-run': { timeout: QUICK },
    'bnd-write': { timeout: QUICK },
    'bnd-suspend': { timeout: QUICK },
    'bnd-race': { timeout: QUICK },
    'bnd-many': { timeout: QUICK },
    'bnd-later': { timeout: 10 },
    'bnd-far': { timeout: 10 },
  });
  const topics = ['bnd-approval', 'bnd-child-run', 'bnd-write', 'bnd-suspend', 'bnd-race', 'bnd-many'];
  w = new WorkerSim(
    engine,
    await engine.principal('WORKER', 'w', { topics: [...topics, 'bnd-later', 'bnd-far', 'bnd-child'] }),
  );
  finance = await engine.principal('HUMAN', 'fin', { groups: ['finance'] });
});
afterAll(() => engine?.close());

async function take(key: string): Promise<{ id: string; task: Locked }> {
  const id = await start(engine, key);
  const task = await w.fetchOne({ topic: key });
  expect(task.processInstanceId).toBe(id);
  return { id, task };
}

/** The token left `work` for `late` through the boundary: the user task there is open. */
async function expectOnTimeoutPath(id: string) {
  const inst = await instance(engine, id);
  expect(inst).toMatchObject({ state: 'ACTIVE', currentNodeId: 'late' });
  const { processInstance } = await engine.ok(engine.adminToken, D.userTasks, { id });
  expect(processInstance?.userTasks).toEqual([expect.objectContaining({ nodeId: 'late', state: 'OPEN' })]);
}

describe('the timeout boundary', () => {
  it('fires while an approval is pending: the approval retired, a late decision WORK_RETIRED', async () => {
    const { id, task } = await take('bnd-approval');
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const proposed = await tool(w, task, 2, 'pay/refund', 'PROPOSED', { orderId: 'O-1', amount: 50 });
    expect(proposed.taskState).toBe('AWAITING_APPROVAL');
    await untilDue(engine, task.id);
    expect(await sweepBoundaries(engine.context)).toBe(1);
    expect(await sweepBoundaries(engine.context)).toBe(0); // once

    const late = await decide(engine, finance, {
      approvalId: proposed.step.approvalId!,
      decision: 'APPROVE',
      digest: proposed.step.digest,
      comment: 'ok',
    });
    expect(codeOf(late)).toBe('WORK_RETIRED');
    expect(await taskRow(engine, task.id)).toMatchObject({
      state: 'CANCELLED',
      boundary: 'TIMEOUT',
      errorType: 'BOUNDARY_TIMEOUT',
    });
    await expectOnTimeoutPath(id);
    const [fired] = await eventsOf(engine, id, 'BOUNDARY_TIMEOUT');
    expect(fired).toMatchObject({ actor: 'engine', taskId: task.id, attempt: 1 });
    expect(fired.data).toMatchObject({
      nodeId: 'work',
      timeoutMinutes: QUICK,
      taskState: 'AWAITING_APPROVAL',
      to: 'late',
    });
    expect(await eventsOf(engine, id, 'APPROVAL_RETIRED')).toHaveLength(1);
    await auditOk(engine, id);
  });

  it('fires while a child runs: the child is cancelled as cancellation does, its end changes nothing', async () => {
    const { id, task } = await take('bnd-child-run');
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    expect((await tool(w, task, 2, 'delegate:bnd-child', 'STARTED', { customerId: 'C-42' })).taskState).toBe(
      'AWAITING_CHILD',
    );
    const childId = json((await eventsOf(engine, id, 'CHILD_STARTED'))[0].data).childInstanceId as string;
    await untilDue(engine, task.id);
    expect(await sweepBoundaries(engine.context)).toBe(1);

    const child = await instance(engine, childId);
    expect(child.state).toBe('CANCELLED');
    expect(child.tasks.map((t) => t.state)).toEqual(['CANCELLED']);
    const [cancelled] = await eventsOf(engine, childId, 'INSTANCE_CANCELLED');
    expect(cancelled.data).toMatchObject({ cascadedFrom: 'parent' });
    expect(String(json(cancelled.data).reason)).toContain('timed out');
    expect(await w.fetch({ topic: 'bnd-child' })).toEqual([]);
    // the child's end reaches the parent's task through CHILD_DONE, which finds it retired
    await waitFor('the CHILD_DONE job of the cancelled child', async () => {
      const r = await engine.context.db.execute(
        sql`SELECT state FROM jobs WHERE kind = 'CHILD_DONE' AND payload->>'childInstanceId' = ${childId}`,
      );
      return (r.rows[0] as { state: string } | undefined)?.state === 'DONE';
    });
    expect((await taskRow(engine, task.id)).state).toBe('CANCELLED');
    // the delegation's step is not an unknown outcome: its child was cancelled, nobody needs to look
    expect(await incidentsOf(engine, { taskId: task.id })).toEqual([]);
    await expectOnTimeoutPath(id);
    await auditOk(engine, id);
    await auditOk(engine, childId);
  });

  it('fires while a write is STARTED: OUTCOME_UNKNOWN with its incident, never re-sent', async () => {
    const { id, task } = await take('bnd-write');
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const started = await w.tool(task, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect(started.idempotencyKey).toBeTruthy();
    await untilDue(engine, task.id);
    expect(await sweepBoundaries(engine.context)).toBe(1);

    // the worker's report of the call it sent is refused; no lease will ever re-send it, keyed or not
    const late = await w.journalRaw(task, 2, {
      kind: 'TOOL_CALL',
      state: 'COMPLETED',
      toolRef: 'crm/create_ticket',
      request: { callId: 'call_2', arguments: TICKET },
      response: { ticketId: 'T-1' },
    });
    expect(codeOf(late)).toBe('WORK_RETIRED');
    expect(codeOf(await w.completeRaw(task, { outcome: { done: true } }))).toBe('WORK_RETIRED');
    expect(await w.fetch({ topic: 'bnd-write' })).toEqual([]);
    const t = await taskOf(engine, task.id);
    expect(t.state).toBe('CANCELLED');
    expect(t.steps.find((s) => s.sequence === 2)).toMatchObject({ state: 'OUTCOME_UNKNOWN' });
    const [inc] = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: task.id });
    expect(inc).toMatchObject({ state: 'OPEN', attempt: 1, sequence: 2 });
    expect(inc.message).toContain("before its node's boundary");
    const h = (await instance(engine, id)).history.map((e) => e.eventType);
    expect(h.slice(h.indexOf('BOUNDARY_TIMEOUT'))).toEqual([
      'BOUNDARY_TIMEOUT',
      'STEP_OUTCOME_UNKNOWN',
      'INCIDENT_OPENED',
      'USER_TASK_CREATED',
    ]);
    // a person's answer is recorded; the task stays retired (the process went on without it)
    await engine.ok(engine.adminToken, D.resolve, {
      input: { id: inc.id, comment: 'ticket T-1 exists', happened: true, result: { ticketId: 'T-1' } },
    });
    expect((await taskOf(engine, task.id)).state).toBe('CANCELLED');
    expect(await w.fetch({ topic: 'bnd-write' })).toEqual([]);
    await expectOnTimeoutPath(id);
    await auditOk(engine, id);
  });

  it('a call an earlier attempt left STARTED and a later one re-sent under its key: one incident', async () => {
    const { id, task } = await take('bnd-write');
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const first = await w.tool(task, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect((await w.failRaw(task, 'WORKER_CRASHED')).data?.failTask.state).toBe('OPEN');
    const t2 = await w.fetchOne({ topic: 'bnd-write' });
    expect(t2.attempt).toBe(2);
    await w.model(t2, 1, 'STARTED');
    await w.model(t2, 1, 'COMPLETED');
    const again = await w.tool(t2, 2, 'crm/create_ticket', 'STARTED', TICKET);
    expect(again.idempotencyKey).toBe(first.idempotencyKey);
    await untilDue(engine, task.id);
    expect(await sweepBoundaries(engine.context)).toBe(1);

    const incs = await incidentsOf(engine, { type: 'TOOL_OUTCOME_UNKNOWN', taskId: task.id });
    expect(incs.map((i) => [i.attempt, i.sequence])).toEqual([[2, 2]]);
    const writes = (await taskOf(engine, task.id)).steps.filter((s) => s.toolRef === 'crm/create_ticket');
    expect(writes.map((s) => [s.attempt, s.state])).toEqual([
      [1, 'OUTCOME_UNKNOWN'],
      [2, 'OUTCOME_UNKNOWN'],
    ]);
    expect(await w.fetch({ topic: 'bnd-write' })).toEqual([]);
    await expectOnTimeoutPath(id);
    await auditOk(engine, id);
  });

  it('waits while the instance is suspended and fires when it resumes, if due', async () => {
    const { id, task } = await take('bnd-suspend');
    await w.tool(task, 1, 'crm/send_email', 'STARTED', { to: 'alice@example.com', body: 'hello' });
    await engine.ok(engine.adminToken, D.suspend, { id });
    await untilDue(engine, task.id);
    expect(await sweepBoundaries(engine.context)).toBe(0);
    expect(await instance(engine, id)).toMatchObject({ state: 'SUSPENDED', currentNodeId: 'work' });

    expect((await engine.ok(engine.adminToken, D.resume, { id })).resumeProcess.state).toBe('ACTIVE');
    const h = (await instance(engine, id)).history.map((e) => e.eventType);
    expect(h.slice(h.indexOf('INSTANCE_SUSPENDED'))).toEqual([
      'INSTANCE_SUSPENDED',
      'INSTANCE_RESUMED',
      'BOUNDARY_TIMEOUT',
      'STEP_OUTCOME_UNKNOWN',
      'INCIDENT_OPENED',
      'USER_TASK_CREATED',
    ]);
    const [fired] = await eventsOf(engine, id, 'BOUNDARY_TIMEOUT');
    expect(fired.data).toMatchObject({ taskState: 'SUSPENDED', to: 'late' });
    expect(await taskRow(engine, task.id)).toMatchObject({ state: 'CANCELLED', boundary: 'TIMEOUT' });
    expect(await w.fetch({ topic: 'bnd-suspend' })).toEqual([]);
    await expectOnTimeoutPath(id);
    await auditOk(engine, id);

    // not due yet at the resume: the task reopens as after any suspension
    const b = await take('bnd-later');
    await engine.ok(engine.adminToken, D.suspend, { id: b.id });
    await engine.ok(engine.adminToken, D.resume, { id: b.id });
    expect(await taskOf(engine, b.task.id)).toMatchObject({ state: 'OPEN', attempt: 2 });
    expect(await eventsOf(engine, b.id, 'BOUNDARY_TIMEOUT')).toEqual([]);
  });

  it('two engines sweeping at once fire each boundary exactly once; one not due is left alone', async () => {
    const taken = [];
    for (let i = 0; i < 6; i++) taken.push(await take('bnd-many'));
    const later = await take('bnd-far');
    for (const t of taken) await untilDue(engine, t.task.id);
    const [a, b] = await Promise.all([sweepBoundaries(engine.context), sweepBoundaries(engine.context)]);
    expect(a + b).toBe(6);
    for (const t of taken) {
      expect(await eventsOf(engine, t.id, 'BOUNDARY_TIMEOUT')).toHaveLength(1);
      expect((await instance(engine, t.id)).tasks.filter((x) => x.nodeId === 'work')).toHaveLength(1);
      await expectOnTimeoutPath(t.id);
    }
    expect(await taskOf(engine, later.task.id)).toMatchObject({ state: 'LEASED' });
    await auditOk(engine, taken[0].id);
  });

  it('a completion racing the sweep: exactly one of them wins', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const { id, task } = await take('bnd-race');
      await untilDue(engine, task.id);
      const [done, fired] = await Promise.all([
        w.completeRaw(task, { outcome: { settled: true } }),
        sweepBoundaries(engine.context),
      ]);
      const inst = await instance(engine, id);
      if (fired === 1) {
        expect(codeOf(done)).toBe('WORK_RETIRED');
        expect(inst.currentNodeId).toBe('late');
        seen.add('boundary');
      } else {
        expect(done.errors).toBeUndefined();
        expect(fired).toBe(0);
        expect(inst.state).toBe('COMPLETED');
        expect(await eventsOf(engine, id, 'BOUNDARY_TIMEOUT')).toEqual([]);
        seen.add('completion');
      }
      await auditOk(engine, id);
    }
    expect(seen.size).toBeGreaterThan(0);
  });

  it("runs in the engine's sweep loop", async () => {
    const { id, task } = await take('bnd-race');
    const errors: unknown[] = [];
    const stop = startSweeps(engine.context, (e) => errors.push(e), [sweepBoundaries]);
    try {
      await waitFor(
        'the sweep loop to fire the boundary',
        async () => (await taskRow(engine, task.id)).boundary,
      );
    } finally {
      stop();
    }
    expect(errors).toEqual([]);
    await expectOnTimeoutPath(id);
  });
});
