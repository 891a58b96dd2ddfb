/**
 * `promtool check metrics` (Prometheus' own linter) on a live /metrics after a task completed and an
 * approval waits, so every family (gauges, counters, the latency histograms) has samples. promtool comes
 * from Debian's `prometheus` package, which `npm test`'s first step installs (scripts/setup-test-deps.sh).
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { oneDoneOneWaiting } from './metrics-scenario.js';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine?.close());

describe('/metrics under promtool', () => {
  it('passes `promtool check metrics` with no problems', async () => {
    const { worker } = await setupSeeds(engine);
    const sim = new WorkerSim(engine, worker, 'promtool-sim');
    await oneDoneOneWaiting(engine, sim);

    const res = await fetch(`${engine.url}/metrics`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('# TYPE ');

    const run = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    if (run.error) {
      throw new Error(
        `promtool did not run (${run.error.message}): run \`npm run setup:test\` (it installs Debian's prometheus, or says how).`,
      );
    }
    // promtool exits 0 and prints nothing when the exposition has no problems (3 = lint findings).
    expect({ status: run.status, out: `${run.stdout}${run.stderr}`.trim() }).toEqual({ status: 0, out: '' });
  });
});
