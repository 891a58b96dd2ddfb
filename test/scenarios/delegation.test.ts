/**
 * Delegation (SPEC §6): an agent's `delegate:<process>` call starts a child with the agent's lineage;
 * the parent parks AWAITING_CHILD without a lease; the child's end completes the parent's step through
 * the CHILD_DONE job, with the child's declared outputs as the tool's result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER, Q } from '../helpers/fixtures.js';
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

async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

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

    const resumed = await waitFor(async () => (await w.fetch())[0]);
    expect(resumed.id).toBe(task.id);
    expect(resumed.attempt).toBe(1);
    const step = resumed.steps.find((s) => s.sequence === 2)!;
    expect(step.state).toBe('COMPLETED');
    expect(step.response).toMatchObject({ process: 'lookup', state: 'COMPLETED', outputs: { answer: 42 } });

    const inst = (await engine.ok(engine.adminToken, Q.instance, { id: p.id })).processInstance;
    const events = inst.history.map((h: any) => h.eventType);
    expect(events).toContain('CHILD_STARTED');
    expect(events).toContain('CHILD_DONE');
  });
});
