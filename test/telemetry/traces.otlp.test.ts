/**
 * Seed 002 traced across processes over OTLP/HTTP: the engine and the demo CRM (this process) and a
 * real worker process (`node server/worker/main.ts`, configured by OTEL_EXPORTER_OTLP_ENDPOINT alone)
 * export to a receiver started here, which decodes what arrives. The spans of both processes form one
 * trace per instance: the worker's traceparent crossed the process boundary to the engine and the CRM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { startTracing, type TracingHandle } from '../../server/telemetry/index.js';
import {
  type Harness,
  instance,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from '../worker/helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { ALICE, expectNoContent, expectStoryTrace } from './story.js';

let receiver: OtlpReceiver;
let tracing: TracingHandle | null;
let h: Harness;
let w: WorkerProcess | null = null;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = await startTracing({
    serviceName: 'abada',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  h = await startHarness({ script: supportTriageScript });
});
afterAll(async () => {
  w?.kill('SIGKILL');
  await h?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

describe('seed 002 traced (OTLP/HTTP to a receiver)', () => {
  it('the engine, the CRM and a worker process export one trace for the instance', async () => {
    expect(tracing).not.toBeNull();
    w = spawnWorker(h, 'otlp-worker', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    const id = await startProcess(h, 'support-triage', ALICE);
    await waitFor('the triage task to complete', async () => {
      const i = await instance(h, id);
      return i.currentNodeId === 'notify_customer' ? i : null;
    });
    // SIGTERM: the worker exports what it still holds before it exits; this process flushes its own.
    w.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    await tracing!.flush();
    await waitFor('the attempt span to arrive', () =>
      receiver.spans.some((s) => s.name === 'invoke_agent triage'),
    );

    expect(receiver.refused).toEqual([]);
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/json']));
    const traceId = expectStoryTrace(receiver.spans, id);
    expectNoContent(receiver.spans);
    // Two processes, one trace: the worker's spans and the engine's (and the CRM's) by service.
    const inTrace = receiver.spans.filter((s) => s.traceId === traceId);
    const serviceOf = (name: string) => inTrace.find((s) => s.name === name)?.service;
    expect(serviceOf('invoke_agent triage')).toBe('abada-worker');
    expect(serviceOf('chat gemini-3.6-flash')).toBe('abada-worker');
    expect(serviceOf('abada completeTask')).toBe('abada');
    expect(serviceOf('tools/call create_ticket')).toBe('abada');
    // The worker process's log lines inside the attempt carry the trace id.
    expect(w.logs.find((l) => l.event === 'task.completed')).toMatchObject({ trace_id: traceId });
  }, 60_000);
});
