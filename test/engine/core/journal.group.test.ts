/**
 * Group commit of the journal (server/engine/journal/group.ts): journal calls of many tasks arriving
 * together are written in one transaction, each with its own answer — a refused call adds nothing and
 * gets its refusal, a proposal opens its approval, a re-send of the same call (same task) waits for the
 * next group and gets the same answer — and every instance's audit chain verifies.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalGroups } from '../../../server/engine/journal/group.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { batchOf, modelStep, toolStep } from '../../helpers/steps.js';
import { type Locked, setupSeeds, WorkerSim } from '../../helpers/worker-sim.js';

const AUDIT = 'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows reason } }';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  w = new WorkerSim(engine, worker);
});
afterAll(() => engine?.close());

const model = modelStep;
const tool = toolStep;
const batch = (t: Locked, steps: unknown[]) => batchOf(engine, w)(t, steps);

async function stepsOf(instanceId: string): Promise<string[]> {
  const inst = (await engine.ok(engine.adminToken, Q.instance, { id: instanceId })).processInstance;
  return inst!.tasks[0].steps.map((s: { sequence: number; state: string }) => `${s.sequence}:${s.state}`);
}

describe('journal group commit', () => {
  it('journals concurrent calls of many tasks together, each with its own answer', async () => {
    const triage: string[] = [];
    const refunds: string[] = [];
    for (let i = 0; i < 16; i++)
      triage.push(
        (await engine.ok(engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-42' } }))
          .startProcess.id,
      );
    for (let i = 0; i < 4; i++)
      refunds.push(
        (await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } }))
          .startProcess.id,
      );
    const tasks = await w.fetch({ maxTasks: 20, waitMs: 2000 });
    expect(tasks).toHaveLength(20);
    const byInstance = new Map(tasks.map((t) => [t.processInstanceId, t]));
    const counts = journalGroups(engine.context).counts;
    const groupedBefore = counts.grouped;

    const read = [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      tool(2, 'COMPLETED', 'crm/get_customer', { customerId: 'C-42' }),
    ];
    const refund = { orderId: '5531', amount: 89, currency: 'EUR' };
    // Groups form from calls that arrive while others are being written. On a fast machine 21 calls
    // could each find a free turn, so the tasks' rows are held for a moment: the first groups wait on
    // them, and the calls arriving meanwhile queue and go together.
    const holder = new pg.Client({ connectionString: engine.databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM external_tasks WHERE id = ANY($1::uuid[]) FOR UPDATE', [
      tasks.map((t) => t.id),
    ]);
    const released = new Promise((r) => setTimeout(r, 300)).then(async () => {
      await holder.query('COMMIT');
      await holder.end();
    });
    const journaled = Promise.all([
      ...triage.map((id, i) =>
        // every fourth call is refused: step 3 cannot follow nothing
        batch(byInstance.get(id)!, i % 4 === 0 ? [model(3, 'STARTED')] : read),
      ),
      ...refunds.map((id) =>
        batch(byInstance.get(id)!, [
          model(1, 'STARTED'),
          model(1, 'COMPLETED'),
          tool(2, 'PROPOSED', 'crm/refund', refund),
        ]),
      ),
      // the same call twice at once for one task: the second waits for another group, same answer
      batch(byInstance.get(triage[1])!, read),
    ]);
    await released;
    const answers = await journaled;
    expect(counts.grouped - groupedBefore).toBeGreaterThanOrEqual(2);

    const states = (r: (typeof answers)[number]) =>
      r.data!.journalSteps.map((x: { step: { state: string } }) => x.step.state);
    // triage[1]'s call went twice at once: whichever the engine took first journaled it, the other is a
    // re-send answered with the steps as they stand (as journalSteps answers any re-send)
    const resent = answers.at(-1)!;
    expect(resent.errors).toBeUndefined();
    const pair = [states(answers[1]), states(resent)].map((x) => x.join(' ')).sort();
    expect(pair).toEqual(['COMPLETED COMPLETED COMPLETED', 'STARTED COMPLETED COMPLETED']);
    triage.forEach((_, i) => {
      const a = answers[i];
      if (i % 4 === 0) expect(codeOf(a)).toBe('SEQUENCE_OUT_OF_ORDER');
      else if (i !== 1) expect(states(a)).toEqual(['STARTED', 'COMPLETED', 'COMPLETED']);
    });
    for (let j = 0; j < refunds.length; j++)
      expect(answers[triage.length + j].data!.journalSteps.at(-1)!.taskState).toBe('AWAITING_APPROVAL');
    // with the same digests
    const view = (r: typeof resent) =>
      r.data!.journalSteps.map((x: { step: { sequence: number; digest: string } }) => [
        x.step.sequence,
        x.step.digest,
      ]);
    expect(view(resent)).toEqual(view(answers[1]));

    for (const [i, id] of triage.entries())
      expect(await stepsOf(id)).toEqual(i % 4 === 0 ? [] : ['1:COMPLETED', '2:COMPLETED']);
    const pending = (await engine.ok(engine.adminToken, Q.approvals, { state: 'PENDING' })).approvals.edges;
    const mine = new Set(refunds.map((id) => byInstance.get(id)!.id));
    expect(pending.filter((e: { node: { taskId: string } }) => mine.has(e.node.taskId))).toHaveLength(4);
    for (const id of [...triage, ...refunds])
      expect((await engine.ok(engine.adminToken, AUDIT, { id })).verifyAudit).toMatchObject({ valid: true });

    // the refused ones carry on as if alone
    const t0 = byInstance.get(triage[0])!;
    expect((await batch(t0, read)).errors).toBeUndefined();
    expect(await stepsOf(triage[0])).toEqual(['1:COMPLETED', '2:COMPLETED']);
  });

  it('a call waiting on a row lock does not hold up the journal of other tasks', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await engine.ok(engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-42' } }))
          .startProcess.id,
      );
    const tasks = await w.fetch({ maxTasks: 3, waitMs: 2000 });
    const [a, b, free] = ids.map((id) => tasks.find((t) => t.processInstanceId === id)!);
    // another transaction holds the rows of two tasks: a journal call for each waits on its lock,
    // which is every group the engine runs at once when nothing else is going on
    const holder = new pg.Client({ connectionString: engine.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM external_tasks WHERE id = ANY($1) FOR UPDATE', [[a.id, b.id]]);
      const waiting = [batch(a, [model(1, 'STARTED')]), batch(b, [model(1, 'STARTED')])];
      await new Promise((r) => setTimeout(r, 100));
      const t0 = Date.now();
      const r = await batch(free, [model(1, 'STARTED')]);
      expect(r.errors).toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(3000);
      await holder.query('COMMIT');
      for (const x of await Promise.all(waiting)) expect(x.errors).toBeUndefined();
    } finally {
      await holder.end();
    }
  });
});
