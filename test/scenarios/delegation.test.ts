/**
 * Delegation (SPEC §6): an agent's `delegate:<process>` call starts a child with the agent's lineage;
 * the parent parks AWAITING_CHILD without a lease; the child's end completes the parent's step through
 * the CHILD_DONE job, with the child's declared outputs as the tool's result.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER, json, Q } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { WorkerSim } from '../helpers/worker-sim.js';

const CHILD = `
kind: Process
key: lookup
variables: { customerId: { type: string, required: true }, answer: { type: integer } }
outputs: [answer]
start: work
nodes:
  - { id: work, type: service, topic: lookup-work, next: done }
  - { id: done, type: end }
`;
const PARENT = `
kind: Process
key: parent
variables: { customerId: { type: string, required: true } }
start: agent
nodes:
  - id: agent
    type: agent
    model: gemini-3.6-flash
    prompt: Delegate the lookup.
    tools: [crm/get_customer, "delegate:lookup"]
    result_variable: result
    next: done
  - { id: done, type: end }
`;

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, { s: `${CRM_SERVER()}---${CHILD}` });
  await engine.ok(engine.adminToken, Q.deploy, { s: PARENT });
  w = new WorkerSim(
    engine,
    await engine.principal('WORKER', 'w', { topics: ['abada:agent', 'lookup-work'] }),
  );
});
afterAll(() => engine?.close());

describe('delegation', () => {
  it("returns the child's outputs as the delegate call's result", async () => {
    const p = (await engine.ok(engine.adminToken, Q.start, { key: 'parent', v: { customerId: 'C-42' } }))
      .startProcess;
    const task = await w.fetchOne();
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    const bad = await w.journalRaw(task, 2, {
      kind: 'TOOL_CALL',
      state: 'STARTED',
      toolRef: 'delegate:lookup',
      request: { callId: 'c', arguments: { customer: 1 } },
    });
    expect(codeOf(bad)).toBe('VALIDATION_FAILED');
    const r = await w.tool(task, 2, 'delegate:lookup', 'STARTED', { customerId: 'C-42' });
    expect(r.taskState).toBe('AWAITING_CHILD');
    expect(await w.fetch()).toEqual([]);

    const child = await w.fetchOne({ topic: 'lookup-work' });
    expect(child.variables).toEqual({ customerId: 'C-42' });
    await w.complete(child, { answer: 42 });

    const resumed = await waitFor('the parent task to reopen', async () => (await w.fetch())[0]);
    expect(resumed.id).toBe(task.id);
    expect(resumed.attempt).toBe(1);
    const step = resumed.steps.find((s) => s.sequence === 2)!;
    expect(step.state).toBe('COMPLETED');
    expect(step.response).toMatchObject({ process: 'lookup', state: 'COMPLETED', outputs: { answer: 42 } });

    const inst = (await engine.ok(engine.adminToken, Q.instance, { id: p.id })).processInstance;
    const events = inst!.history.map((h) => h.eventType);
    expect(events).toContain('CHILD_STARTED');
    expect(events).toContain('CHILD_DONE');
  });

  it('after a suspension, a stale child never answers the new attempt, and a repeated delegation starts a new child', async () => {
    const p = (await engine.ok(engine.adminToken, Q.start, { key: 'parent', v: { customerId: 'C-1' } }))
      .startProcess;
    const t1 = await w.fetchOne();
    await w.model(t1, 1, 'STARTED');
    await w.model(t1, 1, 'COMPLETED');
    expect((await w.tool(t1, 2, 'delegate:lookup', 'STARTED', { customerId: 'A' })).taskState).toBe(
      'AWAITING_CHILD',
    );
    await engine.ok(engine.adminToken, 'mutation($id: ID!) { suspendProcess(id: $id) { state } }', {
      id: p.id,
    });
    await engine.ok(engine.adminToken, 'mutation($id: ID!) { resumeProcess(id: $id) { state } }', {
      id: p.id,
    });
    const t2 = await w.fetchOne();
    expect(t2).toMatchObject({ id: t1.id, attempt: 2 });
    await w.model(t2, 1, 'STARTED');
    await w.model(t2, 1, 'COMPLETED');
    // the same delegation again: a fresh child, not the first attempt's (whose answer belongs to attempt 1)
    expect((await w.tool(t2, 2, 'delegate:lookup', 'STARTED', { customerId: 'A' })).taskState).toBe(
      'AWAITING_CHILD',
    );
    const children = await w.fetch({ topic: 'lookup-work', maxTasks: 5 });
    expect(children).toHaveLength(2);
    // order the two children by creation: the first was started by attempt 1
    const insts = await Promise.all(
      children.map((c) =>
        engine.ok(engine.adminToken, 'query($id: ID!) { processInstance(id: $id) { createdAt } }', {
          id: c.processInstanceId,
        }),
      ),
    );
    const order = children
      .map((c, k) => ({ c, at: insts[k].processInstance.createdAt }))
      .sort((a, b) => (a.at < b.at ? -1 : 1));
    await w.complete(order[0].c, { answer: 1 });
    // The child's answer reaches its parent through a CHILD_DONE job: once that job ran, the parent has
    // seen the answer of attempt 1 and must still be waiting.
    await waitFor('the CHILD_DONE job of the first child to run', async () => {
      const r = await engine.context.db.execute(
        sql`SELECT state FROM jobs WHERE kind = 'CHILD_DONE' AND payload->>'childInstanceId' = ${order[0].c.processInstanceId}`,
      );
      return (r.rows[0] as { state: string } | undefined)?.state === 'DONE';
    });
    expect(await w.fetch()).toEqual([]);
    const waiting = (await engine.ok(engine.adminToken, Q.instance, { id: p.id })).processInstance!.tasks[0];
    expect(waiting.state).toBe('AWAITING_CHILD');
    // the child of attempt 2 answers attempt 2
    await w.complete(order[1].c, { answer: 2 });
    const resumed = await waitFor('the parent task to reopen', async () => (await w.fetch())[0]);
    expect(resumed).toMatchObject({ id: t1.id, attempt: 2 });
    expect(resumed.steps.find((s) => s.sequence === 2)!.response).toMatchObject({ outputs: { answer: 2 } });
  });

  it('cancelling the parent cancels the child it delegated to, and its work', async () => {
    const p = (await engine.ok(engine.adminToken, Q.start, { key: 'parent', v: { customerId: 'C-9' } }))
      .startProcess;
    const t = await w.fetchOne();
    await w.model(t, 1, 'STARTED');
    await w.model(t, 1, 'COMPLETED');
    await w.tool(t, 2, 'delegate:lookup', 'STARTED', { customerId: 'C-9' });
    const parent = (await engine.ok(engine.adminToken, Q.instance, { id: p.id })).processInstance;
    const childId = json(parent!.history.find((h) => h.eventType === 'CHILD_STARTED')?.data)
      .childInstanceId as string;
    await engine.ok(
      engine.adminToken,
      'mutation($id: ID!) { cancelProcess(id: $id, reason: "customer withdrew") { state } }',
      { id: p.id },
    );
    const child = (await engine.ok(engine.adminToken, Q.instance, { id: childId })).processInstance;
    expect(child!.state).toBe('CANCELLED');
    expect(child!.tasks.map((x: { state: string }) => x.state)).toEqual(['CANCELLED']);
    expect(child!.history.at(-1)).toMatchObject({ eventType: 'INSTANCE_CANCELLED' });
    expect(await w.fetch({ topic: 'lookup-work' })).toEqual([]);
  });
});
