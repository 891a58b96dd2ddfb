/**
 * Seed 002's story as a trace, whatever carried the spans (the in-memory exporter, or OTLP/HTTP JSON
 * decoded by a receiver): one trace per instance, rooted at the instance's start, holding the worker's
 * attempt, its model and tool calls with the GenAI attributes, the engine's commands, and the CRM
 * server's own spans as children of the tool calls that reached it.
 */
import { expect } from 'vitest';

export interface SeenSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** 'INTERNAL' | 'SERVER' | 'CLIENT' | … */
  kind: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  service: string;
}

/** What seed 002 puts in prompts, inputs, arguments and answers: none of it may reach a span. */
export const CONTENT = [
  'My parcel never arrived', // the input message
  'look the customer up', // the node's prompt
  'C-42', // the customerId argument and input
  'Parcel not received', // the ticket's subject (an argument)
  'Alice', // the CRM's answer
  'Order 5531', // the final answer
  'crm-secret', // the credential
];

export const ALICE = { customerId: 'C-42', message: 'My parcel never arrived' };

const one = (spans: SeenSpan[], what: string, pred: (s: SeenSpan) => boolean): SeenSpan => {
  const found = spans.filter(pred);
  expect(
    found.map((s) => s.name),
    what,
  ).toHaveLength(1);
  return found[0];
};

/** Asserts the story's trace and returns its trace id. */
export function expectStoryTrace(spans: SeenSpan[], instanceId: string): string {
  const attempt = one(
    spans,
    'the attempt',
    (s) => s.name === 'invoke_agent triage' && s.attributes['abada.process_instance.id'] === instanceId,
  );
  const trace = spans.filter((s) => s.traceId === attempt.traceId);
  const root = one(trace, 'the instance root', (s) => s.name === 'start_process support-triage');
  expect(root.parentSpanId).toBeNull();
  expect(root.attributes['abada.process_instance.id']).toBe(instanceId);
  expect(attempt.parentSpanId).toBe(root.spanId);
  expect(attempt.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'triage',
    'abada.process_instance.id': instanceId,
    'abada.task.attempt': 1,
    'abada.outcome': 'completed',
  });

  const models = trace.filter((s) => s.name.startsWith('chat '));
  expect(models.map((s) => s.name)).toEqual(Array(3).fill('chat gemini-3.6-flash'));
  for (const m of models) {
    expect(m.parentSpanId).toBe(attempt.spanId);
    expect(m.kind).toBe('CLIENT');
    expect(m.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gemini-3.6-flash',
      'gen_ai.provider.name': 'openai',
    });
    expect(m.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(m.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
  }

  for (const tool of ['get_customer', 'create_ticket']) {
    const call = one(trace, tool, (s) => s.name === `execute_tool crm__${tool}`);
    expect(call.parentSpanId).toBe(attempt.spanId);
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': `crm__${tool}`,
      'abada.tool.ref': `crm/${tool}`,
    });
    expect(call.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
    // The CRM server's own span continues the worker's traceparent: a child of the tool call.
    const server = one(trace, `the CRM's ${tool}`, (s) => s.name === `tools/call ${tool}`);
    expect(server.parentSpanId).toBe(call.spanId);
    expect(server.kind).toBe('SERVER');
    expect(server.attributes['gen_ai.tool.name']).toBe(tool);
  }

  // The engine's side of the same trace: the claim, the journal calls and the completion.
  const ids = new Set(trace.map((s) => s.spanId));
  const claim = one(trace, 'the claim', (s) => s.name === 'claim');
  expect(claim.parentSpanId).toBe(root.spanId);
  const journal = trace.filter((s) => s.name === 'abada journalStep' || s.name === 'abada journalSteps');
  expect(journal.length).toBeGreaterThanOrEqual(4);
  for (const j of [...journal, one(trace, 'completion', (s) => s.name === 'abada completeTask')]) {
    expect(j.kind).toBe('SERVER');
    expect(ids.has(j.parentSpanId ?? '')).toBe(true);
  }
  return attempt.traceId;
}

/** No prompt, input, argument, answer or secret in any span's name, attributes or status. */
export function expectNoContent(spans: SeenSpan[]): void {
  const text = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status]));
  for (const c of CONTENT) expect(text, `"${c}" in a span`).not.toContain(c);
  expect(spans.some((s) => Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.input')))).toBe(false);
}
