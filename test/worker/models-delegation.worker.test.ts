/**
 * Model fallback (an unavailable model is journaled FAILED and the next fallback answers at the next
 * sequence, spending no turn; all unavailable → MODEL_UNAVAILABLE), delegation (the child's outputs come
 * back as the delegate call's tool message), and a worker process that survives an unreachable engine.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Script,
  supportTriageScript,
  toolResults,
  unavailableModels,
} from '../../server/demo/scripts.js';
import { workerConfig } from '../../server/worker/config.js';
import { startWorker, type WorkerHandle } from '../../server/worker/loop.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import {
  type Harness,
  instance,
  journalOf,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
} from './helpers.js';

const EXTRA = `
---
kind: Process
key: fallback-triage
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    fallback_models: [gpt-4.1-mini]
    prompt: Read the message from \${customerId}, look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [crm/get_customer, crm/create_ticket]
    result_variable: triage
    max_attempts: 1
    limits: { max_turns: 3 }
    next: done
  - { id: done, type: end }
---
kind: Process
key: lookup
variables: { customerId: { type: string, required: true }, answer: { type: integer } }
outputs: [answer]
start: work
nodes:
  - { id: work, type: service, topic: lookup-work, next: done }
  - { id: done, type: end }
---
kind: Process
key: parent
variables: { customerId: { type: string, required: true } }
start: agent
nodes:
  - id: agent
    type: agent
    model: gemini-3.6-flash
    prompt: Delegate the lookup and report its answer in JSON.
    inputs:
      customerId: \${customerId}
    tools: [crm/get_customer, "delegate:lookup"]
    result_variable: result
    next: done
  - { id: done, type: end }
`;

/** The delegating agent: call delegate__lookup, then answer with the child's outputs. */
const delegating: Script = (req) => {
  if (!req.tools.some((t) => t.function.name === 'delegate__lookup')) return supportTriageScript(req);
  const done = toolResults(req.messages).find((r) => r.name === 'delegate__lookup');
  if (!done) return { toolCalls: [{ name: 'delegate__lookup', arguments: { customerId: 'C-42' } }] };
  const child = JSON.parse(done.content) as { outputs: { answer: number } };
  return {
    content: `\`\`\`json\n${JSON.stringify({ answer: child.outputs.answer, _confidence: 88 })}\n\`\`\``,
  };
};

let h: Harness;
let worker: WorkerHandle | null = null;

async function run() {
  worker = await startWorker(
    workerConfig({
      engineUrl: h.engine.url,
      token: h.workerToken,
      workerId: 'in-process-models',
      modelBaseUrl: h.model.url,
      pollMs: 1000,
      lockMs: 5000,
      logLevel: 'silent',
    }),
  );
}

beforeAll(async () => {
  h = await startHarness({ script: delegating, extraSource: EXTRA });
});
afterEach(async () => {
  await worker?.stop();
  worker = null;
});
afterAll(() => h?.close());

const ALICE = { customerId: 'C-42', message: 'My parcel never arrived' };

describe('model fallback', () => {
  it('journals the unavailable model FAILED and answers with the fallback, spending no turn', async () => {
    h.model.reset();
    h.model.setScript(unavailableModels(['gemini-3.6-flash'], delegating));
    await run();
    const id = await startProcess(h, 'fallback-triage', ALICE);
    const inst = await waitFor('completion', async () => {
      const i = await instance(h, id);
      return i.state === 'COMPLETED' || i.state === 'FAILED' ? i : null;
    });
    const task = inst.tasks[0];
    expect(inst.state).toBe('COMPLETED');
    // max_turns is 3: three answered turns fit only because the failed call spent none.
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:FAILED',
      '1.2:MODEL_CALL:COMPLETED',
      '1.3:TOOL_CALL:COMPLETED',
      '1.4:MODEL_CALL:COMPLETED',
      '1.5:TOOL_CALL:COMPLETED',
      '1.6:MODEL_CALL:COMPLETED',
    ]);
    expect(task.steps.map((s) => s.model).filter(Boolean)).toEqual([
      'gemini-3.6-flash',
      'gpt-4.1-mini',
      'gpt-4.1-mini',
      'gpt-4.1-mini',
    ]);
    expect(task.steps[0].error).toContain('unavailable');
    // a 503 is asked again with backoff (MODEL_TRIES in all) before the fallback: still one FAILED step
    expect(h.model.calls.map((c) => c.model)).toEqual([
      'gemini-3.6-flash',
      'gemini-3.6-flash',
      'gemini-3.6-flash',
      'gpt-4.1-mini',
      'gpt-4.1-mini',
      'gpt-4.1-mini',
    ]);
    expect(task.metadata).toMatchObject({ model: 'gpt-4.1-mini', confidence: 92 });
  }, 30_000);

  it('fails MODEL_UNAVAILABLE when every model is unavailable', async () => {
    h.model.reset();
    h.model.setScript(unavailableModels(['gemini-3.6-flash', 'gpt-4.1-mini'], delegating));
    await run();
    const id = await startProcess(h, 'fallback-triage', ALICE);
    const inst = await waitFor('failure', async () => {
      const i = await instance(h, id);
      return i.tasks[0]?.state === 'FAILED' ? i : null;
    });
    expect(inst.tasks[0].errorType).toBe('MODEL_UNAVAILABLE');
    expect(journalOf(inst.tasks[0])).toEqual(['1.1:MODEL_CALL:FAILED', '1.2:MODEL_CALL:FAILED']);
  }, 30_000);
});

describe('delegation', () => {
  it("returns the child's outputs to the model as the delegate call's result", async () => {
    h.model.reset();
    h.model.setScript(delegating);
    await run();
    const id = await startProcess(h, 'parent', { customerId: 'C-42' });
    const service = new WorkerSim(
      h.engine,
      await h.engine.principal('WORKER', 'lookup-service', { topics: ['lookup-work'] }),
      'lookup-service',
    );
    const child = await service.fetchOne({ topic: 'lookup-work', waitMs: 10_000 });
    expect(child.variables).toEqual({ customerId: 'C-42' });
    expect((await instance(h, id)).tasks[0].state).toBe('AWAITING_CHILD');
    await service.complete(child, { answer: 42 });

    const inst = await waitFor('the parent to complete', async () => {
      const i = await instance(h, id);
      return i.state === 'COMPLETED' ? i : null;
    });
    expect(inst.variables.result).toEqual({ answer: 42 });
    expect(journalOf(inst.tasks[0])).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:COMPLETED',
      '1.3:MODEL_CALL:COMPLETED',
    ]);
    const tool = h.model.calls.at(-1)!.messages.at(-1)!;
    expect(tool.role).toBe('tool');
    expect(JSON.parse(String(tool.content))).toMatchObject({
      childInstanceId: child.processInstanceId,
      process: 'lookup',
      state: 'COMPLETED',
      outputs: { answer: 42 },
    });
    expect(h.model.callCount).toBe(2);
  }, 30_000);
});

describe('an unreachable engine', () => {
  it('backs off without crashing and exits 0 on SIGTERM', async () => {
    const w = spawnWorker(h, 'worker-offline', { ABADA_URL: 'http://127.0.0.1:9' });
    await waitFor(
      'two backoff lines',
      () => w.logs.filter((l) => l.event === 'engine.unreachable').length >= 2,
      15_000,
    );
    expect(w.proc.exitCode).toBeNull();
    const waits = w.logs.filter((l) => l.event === 'engine.unreachable').map((l) => Number(l.retryInMs));
    expect(waits.every((ms) => ms > 0)).toBe(true);
    w.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  }, 30_000);

  it('refuses to start on an invalid configuration, naming the variable', async () => {
    const w = spawnWorker(h, 'worker-bad', { ABADA_URL: 'not a url', ABADA_WORKER_CONCURRENCY: 'many' });
    const { code } = await w.exited;
    expect(code).toBe(2);
    expect(w.output).toContain('ABADA_URL must be an http(s) URL');
    expect(w.output).toContain('ABADA_WORKER_CONCURRENCY must be an integer');
  }, 30_000);
});
