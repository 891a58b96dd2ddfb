/**
 * Attribute names. The GenAI ones (semantic-conventions 1.45, still "incubating") are spelled out rather
 * than imported, as that package advises for incubating names: a rename upstream never changes what Abada
 * emits without a change here.
 */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  /** content: only with ABADA_OTEL_CAPTURE_CONTENT=true, redacted */
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
} as const;

/** Abada's own attributes: ids only, never content. */
export const ABADA = {
  instanceId: 'abada.process_instance.id',
  processKey: 'abada.process.key',
  processVersion: 'abada.process.version',
  taskId: 'abada.task.id',
  attempt: 'abada.task.attempt',
  nodeId: 'abada.node.id',
  outcome: 'abada.outcome',
  workerId: 'abada.worker.id',
  sequence: 'abada.step.sequence',
  stepKind: 'abada.step.kind',
  stepState: 'abada.step.state',
  toolRef: 'abada.tool.ref',
  replayed: 'abada.step.replayed',
  command: 'abada.command',
  code: 'abada.error.code',
  approvalId: 'abada.approval.id',
  approvalLevel: 'abada.approval.level',
  decision: 'abada.approval.decision',
  decidedBy: 'abada.approval.decided_by',
  approvalState: 'abada.approval.state',
} as const;

/** `gen_ai.provider.name` for the worker's routes (the convention's well-known values). */
export function providerName(provider: string): string {
  if (provider === 'gemini') return 'gcp.gemini';
  if (provider === 'openai-compatible') return 'openai';
  return provider;
}
