/**
 * ABADA_OTEL_CAPTURE_CONTENT=true: prompts, arguments and answers go into the GenAI content attributes,
 * redacted — the binding's `redact` paths and, at any depth, secret-looking keys.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTracing,
  traceModelCall,
  traceToolCall,
  type TracingHandle,
} from '../../server/telemetry/index.js';

const exporter = new InMemorySpanExporter();
let tracing: TracingHandle | null;

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'abada-test', exporter, captureContent: true });
});
afterAll(() => tracing?.shutdown());

describe('content capture', () => {
  it('puts redacted arguments, results and messages into the spans', async () => {
    const args = { customerId: 'C-42', card: { number: '4111 1111 1111 1111' }, apiKey: 'k-123', note: 'hi' };
    await traceToolCall(
      {
        name: 'crm__pay',
        callId: 'call_1',
        sequence: 2,
        arguments: JSON.stringify(args),
        ref: 'crm/pay',
        redact: ['card.number'],
      },
      async () => '{"paid":true}',
    );
    await traceModelCall(
      {
        model: 'm',
        provider: 'openai-compatible',
        sequence: 1,
        messages: [{ role: 'user', content: 'Hello C-42' }],
      },
      async () => ({
        message: { role: 'assistant', content: 'Hi' },
        usage: { inputTokens: 3, outputTokens: 1 },
      }),
    );
    const [tool, model] = exporter.getFinishedSpans();
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
      customerId: 'C-42',
      card: { number: '[redacted]' },
      apiKey: '[redacted]',
      note: 'hi',
    });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('{"paid":true}');
    expect(model.attributes['gen_ai.input.messages']).toContain('Hello C-42');
    expect(model.attributes['gen_ai.output.messages']).toContain('Hi');
    expect(JSON.stringify([tool.attributes, model.attributes])).not.toContain('4111');
  });
});
