/**
 * /metrics after a small scenario: one task completed, one approval pending, one worker online, and the
 * in-process latency histograms of fetchAndLock and journalStep. With ABADA_METRICS_TOKEN set, only a
 * bearer of that token may scrape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { metricValue } from '../helpers/metrics.js';
import { oneDoneOneWaiting } from './metrics-scenario.js';

let engine: TestEngine;
const METRICS_TOKEN = 'metrics-token-for-tests';

beforeAll(async () => {
  engine = await startTestEngine({ env: { ABADA_METRICS_TOKEN: METRICS_TOKEN } });
});
afterAll(() => engine?.close());

const scrape = (token: string | null) =>
  fetch(`${engine.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

const value = metricValue;

describe('/metrics', () => {
  it('reports tasks, approvals, workers, tokens and latencies in Prometheus text format', async () => {
    const { worker } = await setupSeeds(engine);
    const sim = new WorkerSim(engine, worker, 'metrics-sim');
    await engine.ok(worker, `mutation($i: RegisterWorkerInput!) { registerWorker(input: $i) { workerId } }`, {
      i: { workerId: 'metrics-sim', topics: ['abada:agent'] },
    });

    // A support-triage task completes; a refund waits for approval.
    await oneDoneOneWaiting(engine, sim);

    expect((await scrape(null)).status).toBe(401);
    expect((await scrape('wrong')).status).toBe(401);
    const res = await scrape(METRICS_TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const body = await res.text();

    expect(value(body, 'abada_tasks{state="COMPLETED"}')).toBe(1);
    expect(value(body, 'abada_tasks{state="AWAITING_APPROVAL"}')).toBe(1);
    expect(value(body, 'abada_approvals_pending')).toBe(1);
    expect(value(body, 'abada_approvals_escalated')).toBe(0);
    expect(value(body, 'abada_workers{health="ONLINE"}')).toBe(1);
    expect(value(body, 'abada_approval_decision_seconds_count')).toBe(0);
    expect(value(body, 'abada_model_tokens_total{model="gemini-3.6-flash",direction="input"}')).toBe(2000);
    expect(value(body, 'abada_model_tokens_total{model="gemini-3.6-flash",direction="output"}')).toBe(200);
    expect(body).toContain('# TYPE abada_model_cost_usd_total counter');
    expect(body).toContain('# TYPE abada_incidents_open gauge');
    expect(value(body, 'abada_fetch_duration_seconds_count{long_poll="true",outcome="ok"}')).toBe(2);
    expect(value(body, 'abada_fetch_duration_seconds_bucket{long_poll="true",outcome="ok",le="+Inf"}')).toBe(
      2,
    );
    expect(
      value(body, 'abada_journal_duration_seconds_count{kind="TOOL_CALL",state="PROPOSED",outcome="ok"}'),
    ).toBe(1);
    expect(
      value(body, 'abada_journal_duration_seconds_count{kind="MODEL_CALL",state="COMPLETED",outcome="ok"}'),
    ).toBe(2);
    // no round of a background loop failed (each is counted by loop and cause)
    for (const loop of ['sweeps', 'jobs', 'stream_pruning', 'webhooks'])
      expect(value(body, `abada_background_failures_total{loop="${loop}",cause="error"}`)).toBe(0);
    // Every sample line is `name{labels} number`.
    for (const line of body.trim().split('\n')) {
      if (!line.startsWith('#')) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+$/);
    }
  });
});
