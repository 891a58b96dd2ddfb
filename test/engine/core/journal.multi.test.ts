/**
 * journalBatch (server/engine/journal/commands.ts): several tasks' journal calls in one request. All of
 * them go to the group commit at once and commit in one transaction; each entry is answered exactly as
 * its call alone — a refused entry adds nothing, gets its own error (at its path, with the code and
 * details journalStep or journalSteps would give) and never fails another — and every chain verifies.
 * A batch malformed as a whole is refused as a whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalGroups } from '../../../server/engine/journal/group.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { scrapeMetric } from '../../helpers/metrics.js';
import { modelStep as model, toolStep as tool } from '../../helpers/steps.js';
import { type Locked, setupSeeds, WorkerSim } from '../../helpers/worker-sim.js';

const MULTI = `mutation($input: JournalBatchInput!) { journalBatch(input: $input) {
  taskId attempt results { idempotencyKey reused taskState step { sequence state digest } } } }`;
const AUDIT = 'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows reason } }';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  w = new WorkerSim(engine, worker);
});
afterAll(() => engine?.close());

type Entry = { taskId: string; attempt: number; steps: unknown[] };
const multi = (entries: Entry[]) => engine.gql(w.token, MULTI, { input: { workerId: w.workerId, entries } });
const entry = (t: Locked, steps: unknown[], attempt = t.attempt): Entry => ({ taskId: t.id, attempt, steps });

/** This engine's journalBatch counters, from /metrics. */
async function batchMetrics() {
  return {
    requests: await scrapeMetric(engine.url, 'abada_journal_batches_total'),
    entries: await scrapeMetric(engine.url, 'abada_journal_batch_entries_total'),
  };
}

async function stepsOf(instanceId: string): Promise<string[]> {
  const inst = (await engine.ok(engine.adminToken, Q.instance, { id: instanceId })).processInstance;
  return inst!.tasks[0].steps.map((s: { sequence: number; state: string }) => `${s.sequence}:${s.state}`);
}

describe('journalBatch', () => {
  it('journals several tasks in one transaction, each entry answered as its call alone', async () => {
    const tasks = await w.leaseTriage(6);
    const read = [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'COMPLETED', 'crm/get_customer', { customerId: 'C-42' }),
    ];
    const counts = journalGroups(engine.context).counts;
    const before = { ...counts };
    const metrics0 = await batchMetrics();
    const r = await multi([
      entry(tasks[0], read),
      entry(tasks[1], [model(1, 'STARTED')]),
      // refused: step 3 cannot follow nothing (a batch of steps: the error names its index)
      entry(tasks[2], [model(1, 'STARTED'), model(3, 'STARTED')]),
      // refused: the wrong attempt (one step: answered as journalStep, no index)
      entry(tasks[3], [model(1, 'STARTED')], tasks[3].attempt + 1),
      // refused: a tool call without its tool
      entry(tasks[4], [{ sequence: 1, kind: 'TOOL_CALL', state: 'STARTED', request: {} }]),
      entry(tasks[5], read),
    ]);
    // one group and one commit for all six (the refused ones add nothing to its write)
    expect(counts.groups - before.groups).toBe(1);
    expect(counts.grouped - before.grouped).toBe(6);
    // /metrics: one journalBatch request carrying six entries
    const metrics1 = await batchMetrics();
    expect([metrics1.requests - metrics0.requests, metrics1.entries - metrics0.entries]).toEqual([1, 6]);
    const out = r.data.journalBatch;
    expect(out.map((e: { taskId: string }) => e.taskId)).toEqual(tasks.map((t) => t.id));
    expect(out[0].results.map((x: { step: { state: string } }) => x.step.state)).toEqual([
      'STARTED',
      'COMPLETED',
      'COMPLETED',
    ]);
    expect(out[1].results).toHaveLength(1);
    expect(out[5].results).toHaveLength(3);
    for (const i of [2, 3, 4]) expect(out[i].results).toBeNull();
    const errors = r.errors ?? [];
    const errorAt = (i: number) => errors.find((e) => (e.path as unknown[] | undefined)?.[1] === i)!;
    expect(errors).toHaveLength(3);
    expect(errorAt(2).path).toEqual(['journalBatch', 2, 'results']);
    expect(errorAt(2).extensions).toMatchObject({ code: 'SEQUENCE_OUT_OF_ORDER', index: 1 });
    expect(errorAt(3).extensions?.code).toBe('ATTEMPT_MISMATCH');
    expect(errorAt(3).extensions?.index).toBeUndefined();
    expect(errorAt(4).extensions?.code).toBe('VALIDATION_FAILED');

    // what each task holds is what its call alone would have left
    const ids = tasks.map((t) => t.processInstanceId);
    expect(await stepsOf(ids[0])).toEqual(['1:COMPLETED', '2:COMPLETED']);
    expect(await stepsOf(ids[1])).toEqual(['1:STARTED']);
    for (const i of [2, 3, 4]) expect(await stepsOf(ids[i])).toEqual([]);
    expect(await stepsOf(ids[5])).toEqual(['1:COMPLETED', '2:COMPLETED']);
    for (const id of ids)
      expect((await engine.ok(engine.adminToken, AUDIT, { id })).verifyAudit).toMatchObject({ valid: true });

    // the same answers as journalSteps: a re-sent entry is answered as reused, with the same digests
    const again = await multi([entry(tasks[0], read), entry(tasks[2], [model(1, 'STARTED')])]);
    expect(again.errors).toBeUndefined();
    const digests = (x: { results: { step: { digest: string } }[] }) => x.results.map((s) => s.step.digest);
    expect(digests(again.data.journalBatch[0])).toEqual(digests(out[0]));
    expect(await stepsOf(ids[2])).toEqual(['1:STARTED']);
  });

  it('refuses a malformed batch as a whole, and a task it cannot see as that entry', async () => {
    const [t] = await w.leaseTriage(1);
    expect(codeOf(await multi([]))).toBe('VALIDATION_FAILED');
    const twice = await multi([entry(t, [model(1, 'STARTED')]), entry(t, [model(2, 'STARTED')])]);
    expect(codeOf(twice)).toBe('VALIDATION_FAILED');
    expect(twice.errors?.[0].message).toMatch(/repeats task/);
    expect(twice.data).toBeNull();
    const many = Array.from({ length: 33 }, (_, i) => ({
      taskId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      attempt: 1,
      steps: [model(1, 'STARTED')],
    }));
    expect(codeOf(await multi(many))).toBe('VALIDATION_FAILED');
    expect(await stepsOf(t.processInstanceId)).toEqual([]);

    const unknown = await multi([
      { taskId: '00000000-0000-4000-8000-000000000001', attempt: 1, steps: [model(1, 'STARTED')] },
      entry(t, [model(1, 'STARTED')]),
    ]);
    expect(unknown.errors).toHaveLength(1);
    expect(unknown.errors?.[0]).toMatchObject({ path: ['journalBatch', 0, 'results'] });
    expect(unknown.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect(unknown.data.journalBatch[1].results[0].step.state).toBe('STARTED');

    // only workers may journal
    expect(
      codeOf(await engine.gql(engine.adminToken, MULTI, { input: { workerId: 'x', entries: [] } })),
    ).toBe('FORBIDDEN');
  });
});
