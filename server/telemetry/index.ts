/**
 * OpenTelemetry traces for the engine, the worker and our MCP servers (docs/tracing.md). Off unless an
 * OTEL_* setting asks for it; off, every helper here is a bare call. This folder imports only
 * @opentelemetry/* and server/shared, so every layer may use it (a dependency-cruiser rule).
 */
export { ABADA } from './attributes.js';
export { continueTrace, contextOf, inSpan, markFailed, openSpan, traceHeaders } from './context.js';
export { startInstanceTrace, traceApprovalWait, traceClaims, tracingOn } from './engine.js';
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
export { startTracing, type TracingHandle } from './sdk.js';
export { readTracingSettings, TracingConfigError } from './settings.js';
