/**
 * For MCP servers of our own (the demo CRM): each JSON-RPC request is a SERVER span continuing the caller's
 * trace from the `traceparent` header, else `params._meta.traceparent` (stdio), under the worker's call.
 */
import { SpanKind } from '@opentelemetry/api';
import { GEN_AI } from './attributes.js';
import { type Carrier, continueTrace, inSpan } from './context.js';
import { tracing } from './state.js';

interface JsonRpcLike {
  method?: unknown;
  id?: unknown;
  params?: { name?: unknown; _meta?: unknown };
}

/** Runs `fn` (the transport's handling of `body`) in a span per request; just `fn()` while tracing is off. */
export function traceMcpRequest<T>(
  serverName: string,
  headers: Carrier,
  body: unknown,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn();
  const msg = (Array.isArray(body) ? body[0] : body) as JsonRpcLike | null;
  const method = typeof msg?.method === 'string' ? msg.method : 'unknown';
  const tool = method === 'tools/call' && typeof msg?.params?.name === 'string' ? msg.params.name : null;
  const meta = msg?.params?._meta;
  const hasHeader = typeof (headers as Record<string, unknown>).traceparent === 'string';
  const carrier = hasHeader || !meta || typeof meta !== 'object' ? headers : (meta as Carrier);
  return continueTrace(carrier, () =>
    inSpan(
      {
        name: tool ? `${method} ${tool}` : method,
        kind: SpanKind.SERVER,
        attributes: {
          'mcp.method.name': method,
          'service.peer': serverName,
          ...(tool ? { [GEN_AI.toolName]: tool, [GEN_AI.operation]: 'execute_tool' } : {}),
          ...(typeof msg?.id === 'string' || typeof msg?.id === 'number'
            ? { 'jsonrpc.request.id': String(msg.id) }
            : {}),
        },
      },
      fn,
    ),
  );
}
