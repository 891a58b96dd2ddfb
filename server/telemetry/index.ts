/**
 * OpenTelemetry traces for the engine, the worker and our MCP servers (docs/tracing.md). Off unless an
 * OTEL_* setting asks for it; off, every helper here is a bare call. This folder imports only
 * @opentelemetry/* and server/shared, so every layer may use it (a dependency-cruiser rule).
 */
export { ABADA, GEN_AI } from './attributes.js';
export { captured } from './content.js';
export {
  type Carrier,
  continueTrace,
  contextOf,
  inSpan,
  markFailed,
  NO_SPAN,
  openSpan,
  traceHeaders,
  traceparentOf,
} from './context.js';
export {
  type ApprovalWait,
  type ClaimedTask,
  startInstanceTrace,
  traceApprovalWait,
  traceClaims,
  tracingOn,
} from './engine.js';
export {
  mcpMeta,
  type ToolCallOf,
  traceAttempt,
  traceModelCall,
  traceToolCall,
  withTraceHeaders,
} from './genai.js';
export { traceLogFields } from './logs.js';
export { traceMcpRequest } from './mcpserver.js';
export { startTracing, type StartTracingOptions, type TracingHandle } from './sdk.js';
export { readTracingSettings, TracingConfigError, type TracingSettings } from './settings.js';
