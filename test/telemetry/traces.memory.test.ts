/**
 * Seed 002 traced in one process: the engine, the demo CRM, the scripted model and the Agent Worker
 * (the same code `npm run worker` runs) share an in-memory span exporter. The story's spans form one
 * trace per instance, the worker's requests carry it to the engine, the model endpoint and the CRM, and
 * the JSON logs name it; no content reaches a span.
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { createLogger } from '../../server/log.js';
import { startTracing, type TracingHandle } from '../../server/telemetry/index.js';
import { workerConfig } from '../../server/worker/config.js';
import { startWorker, type WorkerHandle } from '../../server/worker/loop.js';
import { type Harness, instance, startHarness, startProcess, waitFor } from '../worker/helpers.js';
import { ALICE, expectNoContent, expectStoryTrace, type SeenSpan } from './story.js';

const exporter = new InMemorySpanExporter();
let tracing: TracingHandle | null;
let h: Harness;
let worker: WorkerHandle;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  // Before the engine starts: its GraphQL plugin is chosen once, at start.
  tracing = await startTracing({ serviceName: 'abada-test', exporter });
  h = await startHarness({ script: supportTriageScript });
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => void logLines.push(JSON.parse(line)) },
  });
  worker = await startWorker(
    workerConfig({
      engineUrl: h.engine.url,
      token: h.workerToken,
      workerId: 'traced-worker',
      modelBaseUrl: h.model.url,
      modelApiKey: 'test-key',
      pollMs: 1000,
    }),
    { logger },
  );
});
afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await tracing?.shutdown();
});

function seen(s: ReadableSpan): SeenSpan {
  const parent = s.parentSpanContext;
  return {
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: parent ? parent.spanId : null,
    name: s.name,
    kind: SpanKind[s.kind],
    attributes: { ...s.attributes },
    status: { ...s.status },
    service: String(s.resource.attributes['service.name']),
  };
}

describe('seed 002 traced (in-memory exporter)', () => {
  it('one trace holds the attempt, the model and tool calls, the engine commands and the CRM spans', async () => {
    const id = await startProcess(h, 'support-triage', ALICE);
    await waitFor('the triage task to complete', async () => {
      const i = await instance(h, id);
      return i.currentNodeId === 'notify_customer' ? i : null;
    });
    await waitFor('the attempt span to end', () =>
      exporter.getFinishedSpans().some((s) => s.name === 'invoke_agent triage'),
    );
    const spans = exporter.getFinishedSpans().map(seen);
    const traceId = expectStoryTrace(spans, id);
    expectNoContent(spans);

    // The model endpoint received the traceparent of each model call's span.
    const models = spans.filter((s) => s.name.startsWith('chat ')).map((s) => s.spanId);
    expect(h.model.calls.map((c) => c.traceparent?.split('-').slice(1, 3))).toEqual(
      models.map((spanId) => [traceId, spanId]),
    );
    // The worker's JSON log lines inside the attempt name its trace.
    const completed = logLines.find((l) => l.event === 'task.completed');
    expect(completed).toMatchObject({ trace_id: traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(logLines.find((l) => l.event === 'worker.registered')).not.toHaveProperty('trace_id');
  }, 40_000);
});
