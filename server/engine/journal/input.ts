/** What a journal request means before any rule runs: its shape and size, its digest and frozen binding. */
import { EngineError, invalid } from '../../errors.js';
import type { AgentWork } from '../definitions/index.js';
import { requestDigest, toolCallDigest } from '../../shared/canonical.js';
import type { StepRow } from '../../db/schema.js';
import type { Actor, EngineContext } from '../common/index.js';
import type { Usage } from '../prices/index.js';

/** One step as a worker journals it (SPEC §4). */
export interface JournalStepInput {
  taskId: string;
  workerId: string;
  attempt: number;
  sequence: number;
  kind: StepRow['kind'];
  state: StepRow['state'];
  toolRef?: string | null;
  model?: string | null;
  request: unknown;
  response?: unknown;
  usage?: Usage | null;
  error?: string | null;
  /** CALL (default), or the engine's PRECONDITION / LOOKUP read of a guarded call (SPEC §11) */
  purpose?: StepRow['purpose'] | null;
  /** with a proposal: the tool server's own description of the tool */
  toolDescription?: string | null;
}

/** Checks that need no database: who may journal, payload size, sequence shape. */
export function precheck(ctx: EngineContext, actor: Actor, input: JournalStepInput) {
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only a worker credential can journal steps.');
  const size = Buffer.byteLength(
    JSON.stringify([input.request ?? null, input.response ?? null, input.error ?? null]),
    'utf8',
  );
  if (size > ctx.config.maxPayloadBytes) {
    throw new EngineError(
      'PAYLOAD_TOO_LARGE',
      `The step payload is ${size} bytes; the limit is ${ctx.config.maxPayloadBytes}. Trim tool results before journaling them.`,
      { limitBytes: ctx.config.maxPayloadBytes },
    );
  }
  if (!Number.isSafeInteger(input.sequence) || input.sequence < 1)
    throw invalid('sequence starts at 1 and counts up by one per step.', 'sequence');
  if (!Number.isSafeInteger(input.attempt))
    throw invalid('attempt is the attempt number fetchAndLock gave.', 'attempt');
}

export function argumentsOf(request: unknown): unknown {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return undefined;
  return (request as Record<string, unknown>).arguments;
}

export function digestOf(input: JournalStepInput, work: AgentWork | null) {
  if (input.kind === 'TOOL_CALL') {
    if (!input.toolRef) throw invalid('A TOOL_CALL step names its toolRef (server/tool).', 'toolRef');
    const binding = work?.toolBindings.find((b) => b.ref === input.toolRef) ?? null;
    if (!binding) {
      throw new EngineError(
        'BINDING_NOT_FROZEN',
        `${input.toolRef} is not a tool bound to this agent node in its definition version; only frozen bindings may be called.`,
        { toolRef: input.toolRef },
      );
    }
    const args = argumentsOf(input.request);
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw invalid(
        'A TOOL_CALL request is { callId, arguments } with arguments a JSON object.',
        'request.arguments',
      );
    }
    return { digest: toolCallDigest(input.toolRef, args), binding };
  }
  const model = input.model ?? null;
  if (!model) throw invalid('A MODEL_CALL step names its model.', 'model');
  if (work && model !== work.model && !work.fallbackModels.includes(model)) {
    throw new EngineError(
      'BINDING_NOT_FROZEN',
      `Model ${model} is neither the node's model nor one of its fallback models.`,
      { model },
    );
  }
  return { digest: requestDigest({ model, request: input.request ?? null }), binding: null };
}
