/**
 * The Agent Worker hands leases back instead of spending attempts or letting leases lapse (SPEC §15.3):
 * on SIGTERM (a real worker process) its leased task is deferred with reason `shutdown` and another
 * worker takes it at once; when the model answers 429 with a Retry-After longer than the worker waits
 * in place, and no fallback model is left, the task is deferred with that wait (cut to
 * ABADA_MAX_DEFER_MS here) and the next lease asks the same model again.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Script } from '../../server/demo/model-server.js';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { startWorker, type WorkerHandle, workerConfig } from '../../server/worker/main.js';
import { WorkerSim } from '../helpers/worker-sim.js';
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

let h: Harness;
const procs: WorkerProcess[] = [];
let worker: WorkerHandle | null = null;
/** how many of the next chat requests answer 429 (any model) */
let refusals = 0;

const script: Script = (req) => {
  if (refusals > 0) {
    refusals--;
    return {
      status: 429,
      body: { error: { message: 'rate limited (injected)', type: 'rate_limit', code: null } },
      headers: { 'retry-after': '30' },
    };
  }
  return supportTriageScript(req);
};

beforeAll(async () => {
  h = await startHarness({ script, env: { ABADA_MAX_DEFER_MS: '1500' } });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await worker?.stop();
  await h?.close();
});

const ALICE = { customerId: 'C-42', message: 'My parcel never arrived' };

async function leaseExpiries(taskId: string): Promise<number> {
  const r = await h.engine.context.db.execute(
    sql`SELECT lease_expiries FROM external_tasks WHERE id = ${taskId}`,
  );
  return (r.rows[0] as { lease_expiries: number }).lease_expiries;
}

describe('the Agent Worker defers', () => {
  it('on SIGTERM: its leased task is handed back and another worker takes it at once', async () => {
    h.model.reset();
    h.model.setLatency(10_000);
    const w = spawnWorker(h, 'worker-term', { ABADA_WORKER_GRACE_MS: '0' });
    procs.push(w);
    const id = await startProcess(h, 'support-triage', ALICE);
    // the first model call is in flight (the scripted model holds its answers)
    await waitFor('the first model call to be in flight', () => (h.model.callCount > 0 ? true : null));
    w.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
    h.model.setLatency(0);
    expect(w.logs.some((l) => l.event === 'task.deferred' && l.reason === 'shutdown')).toBe(true);

    const i = await instance(h, id);
    const task = i.tasks.find((t) => t.nodeId === 'triage')!;
    expect(task).toMatchObject({ state: 'OPEN', attempt: 1, workerId: null });
    const deferred = i.history.find((x) => x.eventType === 'TASK_DEFERRED')!;
    expect(deferred).toMatchObject({ actor: 'worker:worker-term', attempt: 1 });
    expect(deferred.data).toMatchObject({ reason: 'shutdown', retryAfterMs: 0, deferrals: 1 });

    // another worker, at once (no lease to wait out), on the same attempt, nothing counted
    const other = await h.engine.principal('WORKER', 'other-worker', { topics: ['abada:agent'] });
    const sim = new WorkerSim(h.engine, other, 'sim-after-term');
    const [again] = await sim.fetch({ topic: 'abada:agent', waitMs: 0 });
    expect(again).toMatchObject({ id: task.id, attempt: 1 });
    expect(await leaseExpiries(task.id)).toBe(0);
  });

  it('on a model 429: defers with its Retry-After, and the next lease asks the same model again', async () => {
    h.model.reset();
    // the primary model and its fallback both answer 429, Retry-After: 30 (over the in-place bound)
    refusals = 2;
    worker = await startWorker(
      workerConfig({
        engineUrl: h.engine.url,
        token: h.workerToken,
        workerId: 'in-process-429',
        modelBaseUrl: h.model.url,
        pollMs: 500,
        lockMs: 5000,
        logLevel: 'silent',
      }),
    );
    const id = await startProcess(h, 'support-triage', { customerId: 'C-43', message: 'late' });
    const done = await waitFor(
      'the instance to leave triage',
      async () => {
        const i = await instance(h, id);
        return i.currentNodeId !== 'triage' ? i : null;
      },
      30_000,
    );
    const deferred = done.history.filter((x) => x.eventType === 'TASK_DEFERRED');
    expect(deferred).toHaveLength(1);
    expect(deferred[0].data).toMatchObject({
      retryAfterMs: 1500,
      requestedMs: 30_000,
      deferrals: 1,
    });
    expect(String(deferred[0].data.reason)).toContain('gpt-4.1-mini answered HTTP 429');
    const task = done.tasks.find((t) => t.nodeId === 'triage')!;
    // one attempt: the primary FAILED (the fallback was tried), the fallback's call STARTED, deferred,
    // then asked again on the next lease
    expect(task).toMatchObject({ state: 'COMPLETED', attempt: 1 });
    expect(journalOf(task).slice(0, 2)).toEqual(['1.1:MODEL_CALL:FAILED', '1.2:MODEL_CALL:COMPLETED']);
    expect(task.steps[1].model).toBe('gpt-4.1-mini');
    const leased = done.history.filter((x) => x.eventType === 'TASK_LEASED');
    expect(leased).toHaveLength(2);
    expect(done.history.some((x) => x.eventType === 'ATTEMPT_FAILED')).toBe(false);
  });
});
