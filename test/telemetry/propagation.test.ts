/**
 * The trace context on the MCP side, without HTTP headers: the worker puts it in `_meta` next to the
 * idempotency key, and an MCP server of ours continues it from `_meta` when no header carries it (how a
 * stdio server receives it).
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  inSpan,
  mcpMeta,
  startTracing,
  traceMcpRequest,
  type TracingHandle,
} from '../../server/telemetry/index.js';

const exporter = new InMemorySpanExporter();
let tracing: TracingHandle | null;

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'abada-test', exporter });
});
afterAll(() => tracing?.shutdown());

describe('trace context in MCP _meta', () => {
  it('the worker sends it with the key; a server continues it from _meta when no header has it', async () => {
    const meta = await inSpan({ name: 'execute_tool crm__create_ticket' }, async () =>
      mcpMeta({ idempotencyKey: 'abada-1' }),
    );
    const tool = exporter.getFinishedSpans()[0];
    expect(meta._meta).toEqual({
      idempotencyKey: 'abada-1',
      traceparent: `00-${tool.spanContext().traceId}-${tool.spanContext().spanId}-01`,
    });
    const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_ticket', ...meta } };
    await traceMcpRequest('stdio-crm', {}, body, async () => {});
    const server = exporter.getFinishedSpans()[1];
    expect(server.name).toBe('tools/call create_ticket');
    expect(server.spanContext().traceId).toBe(tool.spanContext().traceId);
    expect(server.parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(server.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'jsonrpc.request.id': '7' });
  });

  it('outside any span there is nothing to add: the key alone, or no _meta at all', () => {
    expect(mcpMeta({ idempotencyKey: 'abada-2' })).toEqual({ _meta: { idempotencyKey: 'abada-2' } });
    expect(mcpMeta({})).toEqual({});
  });
});
