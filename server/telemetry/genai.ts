/**
 * The worker's spans, after the OpenTelemetry GenAI semantic conventions: the task attempt (in the
 * instance's trace through the task's `traceparent`), each model call and each tool call. Attributes carry
 * names, ids and token counts; content only with ABADA_OTEL_CAPTURE_CONTENT=true (content.ts).
 */
import { SpanKind } from '@opentelemetry/api';
import { ABADA, GEN_AI, providerName } from './attributes.js';
import { captured } from './content.js';
import { contextOf, inSpan, markFailed, traceHeaders } from './context.js';
import { tracing } from './state.js';

export interface AttemptOf {
  id: string;
  attempt: number;
  processInstanceId: string;
  nodeId: string;
  traceparent?: string | null;
  agentWork?: { model: string } | null;
}

/** One lease of one task as a span in the instance's trace; `fn`'s result is its outcome. */
export function traceAttempt<T extends string>(
  task: AttemptOf,
  workerId: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn();
  return inSpan(
    {
      name: `invoke_agent ${task.nodeId}`,
      kind: SpanKind.INTERNAL,
      parent: contextOf(task.traceparent),
      attributes: {
        [GEN_AI.operation]: 'invoke_agent',
        [GEN_AI.agentName]: task.nodeId,
        [GEN_AI.conversationId]: `${task.id}/${task.attempt}`,
        ...(task.agentWork ? { [GEN_AI.requestModel]: task.agentWork.model } : {}),
        [ABADA.taskId]: task.id,
        [ABADA.attempt]: task.attempt,
        [ABADA.instanceId]: task.processInstanceId,
        [ABADA.nodeId]: task.nodeId,
        [ABADA.workerId]: workerId,
      },
    },
    async (span) => {
      const outcome = await fn();
      span.setAttribute(ABADA.outcome, outcome);
      // the attempt reported failTask: an error of the span, whose errorType the journal keeps
      if (outcome === 'failed') markFailed(span, null, 'ATTEMPT_FAILED');
      return outcome;
    },
  );
}

export interface ModelCallOf {
  model: string;
  provider: string;
  sequence: number;
  messages: unknown;
}

interface ModelAnswerLike {
  message: unknown;
  usage: { inputTokens: number; outputTokens: number };
}

/** One model call (a CLIENT span); the request to the endpoint carries its traceparent. */
export function traceModelCall<T extends ModelAnswerLike>(
  call: ModelCallOf,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn();
  return inSpan(
    {
      name: `chat ${call.model}`,
      kind: SpanKind.CLIENT,
      attributes: {
        [GEN_AI.operation]: 'chat',
        [GEN_AI.requestModel]: call.model,
        [GEN_AI.provider]: providerName(call.provider),
        [ABADA.sequence]: call.sequence,
        ...content(GEN_AI.inputMessages, captured(call.messages)),
      },
    },
    async (span) => {
      const answer = await fn();
      span.setAttributes({
        [GEN_AI.inputTokens]: answer.usage.inputTokens,
        [GEN_AI.outputTokens]: answer.usage.outputTokens,
        ...content(GEN_AI.outputMessages, captured([answer.message])),
      });
      return answer;
    },
  );
}

export interface ToolCallOf {
  /** the function name the model called (`crm__get_customer`) */
  name: string;
  callId: string;
  sequence: number;
  /** the arguments as the model wrote them (JSON text) */
  arguments: string;
  /** when the name is bound */
  ref?: string | null;
  redact?: readonly string[];
  /** a step this attempt already journaled (replayed from the journal, not run again) */
  replayed?: boolean;
}

/** One tool call, from the model's request to the tool message (a proposal ends it parked). */
export function traceToolCall(
  call: ToolCallOf,
  fn: () => Promise<string>,
  failed?: (e: unknown) => boolean,
): Promise<string> {
  if (!tracing.on) return fn();
  return inSpan(
    {
      name: `execute_tool ${call.name}`,
      kind: SpanKind.INTERNAL,
      failed,
      attributes: {
        [GEN_AI.operation]: 'execute_tool',
        [GEN_AI.toolName]: call.name,
        [GEN_AI.toolCallId]: call.callId,
        [GEN_AI.toolType]: 'function',
        [ABADA.sequence]: call.sequence,
        ...(call.ref ? { [ABADA.toolRef]: call.ref } : {}),
        ...(call.replayed ? { [ABADA.replayed]: true } : {}),
        ...content(GEN_AI.toolArguments, captured(parseOr(call.arguments), call.redact)),
      },
    },
    async (span) => {
      const content = await fn();
      const result = captured(content);
      if (result !== undefined) span.setAttribute(GEN_AI.toolResult, result);
      return content;
    },
  );
}

/** `{ [name]: text }` when content is captured, else nothing at all. */
function content(name: string, text: string | undefined): Record<string, string> {
  return text === undefined ? {} : { [name]: text };
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text || '{}');
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return text;
  }
}

/** An MCP request's `_meta`: its fields plus the trace context (for stdio servers, which see no headers). */
export function mcpMeta(fields: Record<string, string>): { _meta?: Record<string, string> } {
  const meta = { ...fields, ...traceHeaders() };
  return Object.keys(meta).length ? { _meta: meta } : {};
}

/** A fetch `init` with the active trace context in its headers (the same `init` while tracing is off). */
export function withTraceHeaders(init: RequestInit | undefined): RequestInit | undefined {
  const trace = traceHeaders();
  if (!trace.traceparent) return init;
  const headers = new Headers(init?.headers);
  for (const [k, v] of Object.entries(trace)) headers.set(k, v);
  return { ...init, headers };
}
