/**
 * A busy Agent Worker stays quiet (issue 18): Node's MaxListenersExceededWarning is what a listener leak
 * looks like, so a worker must never print it for listeners it holds on purpose.
 *  - Many tasks at once: each running task's lease listens to the worker's stop signal until it ends
 *    (bounded by the concurrency, so not a leak; the signal is told its bound).
 *  - A full worker: while every slot is taken the fetch loop waits for one to free; it once added a stop
 *    listener per ended task and never removed it (a real leak, fixed with one listener for its life).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportTriageScript } from '../../server/demo/scripts.js';
import {
  allAtNode,
  type Harness,
  spawnWorker,
  startHarness,
  startProcess,
  type WorkerProcess,
} from './helpers.js';

let h: Harness;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  // the model holds each answer a while, so the tasks overlap
  h = await startHarness({ script: supportTriageScript, modelLatencyMs: 150 });
}, 60_000);
afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await h?.close();
});

async function runTasks(worker: WorkerProcess, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(await startProcess(h, 'support-triage', { customerId: 'C-42', message: `parcel ${i}` }));
  await allAtNode(h, ids, 'notify_customer');
  worker.kill('SIGTERM');
  expect((await worker.exited).code).toBe(0);
}

/** The most tasks the worker held at once, from its task.start / task.end log lines in order. */
function mostAtOnce(w: WorkerProcess): number {
  let now = 0;
  let most = 0;
  for (const l of w.logs) {
    if (l.event === 'task.start') most = Math.max(most, ++now);
    if (l.event === 'task.end') now--;
  }
  return most;
}

describe('a busy worker prints no listener warning', () => {
  it('16 tasks at once (concurrency 16)', async () => {
    const w = spawnWorker(h, 'wide', { ABADA_WORKER_CONCURRENCY: '16', ABADA_WORKER_POLL_MS: '200' });
    workers.push(w);
    await runTasks(w, 16);
    expect(mostAtOnce(w), 'the tasks overlapped').toBeGreaterThan(10);
    expect(w.output).not.toContain('MaxListenersExceededWarning');
  }, 90_000);

  it('14 tasks through 2 slots: the loop waits for a free slot 12 times', async () => {
    const w = spawnWorker(h, 'narrow', { ABADA_WORKER_CONCURRENCY: '2', ABADA_WORKER_POLL_MS: '200' });
    workers.push(w);
    await runTasks(w, 14);
    expect(w.output).not.toContain('MaxListenersExceededWarning');
  }, 90_000);
});
