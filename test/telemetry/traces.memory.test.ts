/**
 * Seed 002 traced in one process: the engine, the demo CRM, the scripted model and the Agent Worker
 * (the same code `npm run worker` runs) share an in-memory span exporter. The story's spans form one
 * trace per instance, the worker's requests carry it to the engine, the model endpoint and the CRM, and
 * the JSON logs name it; no content reaches a span.
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundScript, supportTriageScript } from '../../server/demo/scripts.js';
import { createLogger } from '../../server/log.js';
import { startTracing, type TracingHandle } from '../../server/telemetry/index.js';
import { workerConfig } from '../../server/worker/config.js';
import { EngineClient } from '../../server/worker/graphql.js';
import { startWorker, type WorkerHandle } from '../../server/worker/loop.js';
import { Q } from '../helpers/fixtures.js';
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
    // An operator finds the trace from the instance.
    const found = await h.engine.ok(
      h.engine.adminToken,
      'query($id: ID!) { processInstance(id: $id) { traceId } }',
      {
        id,
      },
    );
    expect(found.processInstance.traceId).toBe(traceId);

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

  it("an approval's wait is a span of the instance's trace, with who decided what", async () => {
    h.model.setScript(refundScript);
    const lead = await h.engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
    const id = await startProcess(h, 'refund', {
      customerId: 'C-42',
      message: 'My parcel 5531 never arrived',
    });
    const approval = await waitFor('the refund to await approval', async () => {
      const d = await h.engine.ok(lead, Q.approvals, { state: 'PENDING' });
      return d.approvals.edges[0]?.node ?? null;
    });
    const r = await h.engine.gql(lead, Q.decide, {
      input: { approvalId: approval.id, decision: 'APPROVE', digest: approval.digest },
    });
    expect(r.errors).toBeUndefined();
    await waitFor('the instance to complete', async () => (await instance(h, id)).state === 'COMPLETED');
    await waitFor('the second lease to end', () =>
      exporter
        .getFinishedSpans()
        .some(
          (s) =>
            s.attributes['abada.outcome'] === 'completed' && s.attributes['abada.process_instance.id'] === id,
        ),
    );
    const spans = exporter.getFinishedSpans().map(seen);
    const root = spans.find((s) => s.name === 'start_process refund')!;
    expect(root.attributes['abada.process_instance.id']).toBe(id);
    const trace = spans.filter((s) => s.traceId === root.traceId);
    const wait = trace.find((s) => s.name === 'approval_wait crm/refund');
    expect(wait).toMatchObject({
      parentSpanId: root.spanId,
      attributes: {
        'abada.approval.id': approval.id,
        'abada.approval.decided_by': 'fiona',
        'abada.approval.decision': 'APPROVE',
        'abada.approval.state': 'APPROVED',
        'abada.approval.level': 1,
        'abada.tool.ref': 'crm/refund',
      },
    });
    // Both leases (the one that proposed and parked, the one that refunded) joined the same trace.
    const leases = trace.filter((s) => s.name === 'invoke_agent triage');
    expect(leases.map((s) => s.attributes['abada.outcome'])).toEqual(['parked', 'completed']);
    expect(trace.filter((s) => s.name === 'tools/call refund')).toHaveLength(1);
    expectNoContent(spans);
  }, 40_000);

  it("journal calls of several tasks batched in one request: each engine span lands in its own task's trace", async () => {
    const client = new EngineClient(h.engine.url, h.workerToken);
    const tracer = trace.getTracer('abada-test');
    // three tasks' calls made at once, each in its own trace (tasks the engine does not know: refused)
    const taskIds = [1, 2, 3].map((n) => `00000000-0000-4000-8000-00000000000${n}`);
    const roots = taskIds.map((id) => tracer.startSpan(`task ${id}`));
    const answers = await Promise.allSettled(
      taskIds.map((taskId, i) =>
        context.with(trace.setSpan(context.active(), roots[i]), () =>
          client.journalStep({
            taskId,
            workerId: 'traced-worker',
            attempt: 1,
            sequence: 1,
            kind: 'MODEL_CALL',
            state: 'STARTED',
            model: 'gpt-4.1-mini',
            request: {},
          }),
        ),
      ),
    );
    for (const r of roots) r.end();
    expect(client.journal.counts).toMatchObject({ requests: 1, batches: 1, batched: 3 });
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected', 'rejected']);
    const engineSpans = await waitFor('an engine span for each entry', () => {
      const found = exporter
        .getFinishedSpans()
        .map(seen)
        .filter(
          (s) => s.name === 'abada journalStep' && taskIds.includes(String(s.attributes['abada.task.id'])),
        );
      return found.length === 3 ? found : null;
    });
    for (const [i, id] of taskIds.entries()) {
      const span = engineSpans.find((s) => s.attributes['abada.task.id'] === id)!;
      expect(span.traceId).toBe(roots[i].spanContext().traceId);
      expect(span.parentSpanId).toBe(roots[i].spanContext().spanId);
      expect(span.attributes['abada.error.code']).toBe('NOT_FOUND');
    }
  });
});
