/**
 * The model turns of one lease: each turn one journaled MODEL_CALL (consumed from the journal when a
 * previous lease completed it), along the chain [model, ...fallbackModels] while models are unavailable.
 */
import { AttemptFailure, type Attempt, Deferral } from './attempt.js';
import { type FunctionTool, type Message, messagesHash } from './conversation.js';
import { traceModelCall } from '../telemetry/index.js';
import { GraphQLRequestError } from './graphql.js';
import { type ModelClient, ModelRequestError, ModelUnavailableError } from './model.js';

export type AssistantMessage = Extract<Message, { role: 'assistant' }>;

export const DEFER_WITHOUT_RETRY_AFTER_MS = 10_000;

export class ModelTurns {
  /** Index in the chain; an unavailable model moves it on for the rest of the task. */
  private modelIndex = 0;
  /** The model that gave the last answer (the task's metadata). */
  lastModel: string | null = null;
  inputTokens = 0;
  outputTokens = 0;

  constructor(
    private readonly at: Attempt,
    private readonly models: ModelClient,
    private readonly chain: readonly string[],
  ) {}

  /** The assistant's next message: replayed from the journal, or asked of the first available model. */
  async next(messages: Message[], tools: FunctionTool[]): Promise<AssistantMessage> {
    for (;;) {
      this.at.checkLease();
      const existing = this.at.existing();
      const call = existing ? this.fromJournal(existing) : await this.start(messages, tools);
      if (call === 'next') continue;
      if ('message' in call) return call.message;
      await this.at.flush(); // nothing is held back when a call goes out (a no-op after a STARTED batch)
      const message = await this.ask(call.model, call.request, messages, tools);
      if (message) return message;
    }
  }

  /** A journaled model call: its answer (COMPLETED), the next model (FAILED), or asked again (STARTED). */
  private fromJournal(
    existing: NonNullable<ReturnType<Attempt['existing']>>,
  ): 'next' | { message: AssistantMessage } | { model: string; request: unknown } {
    const { at, chain } = this;
    if (existing.kind !== 'MODEL_CALL')
      throw new AttemptFailure(
        'JOURNAL_CONFLICT',
        `step ${at.seq} is a ${existing.kind}, a model call was due`,
      );
    const model = existing.model ?? chain[this.modelIndex];
    if (existing.state === 'COMPLETED') {
      this.answered(model, existing.usage);
      at.next();
      return { message: existing.response as AssistantMessage };
    }
    if (existing.state === 'FAILED') {
      this.modelIndex = Math.max(this.modelIndex, chain.indexOf(model) + 1);
      at.next();
      return 'next';
    }
    // a STARTED step found in the journal is completed with the request it was started with
    return { model, request: existing.request };
  }

  /** A new model call: the first model of the chain with an endpoint, journaled STARTED. */
  private async start(
    messages: Message[],
    tools: FunctionTool[],
  ): Promise<{ model: string; request: unknown }> {
    const { at, chain } = this;
    while (this.modelIndex < chain.length && !this.models.hasEndpoint(chain[this.modelIndex])) {
      at.log.warn({ event: 'model.no_endpoint', model: chain[this.modelIndex] }, 'skipping model');
      this.modelIndex++;
    }
    if (this.modelIndex >= chain.length)
      throw new AttemptFailure('MODEL_UNAVAILABLE', `no model of ${chain.join(', ')} is available`);
    const model = chain[this.modelIndex];
    const request = { model, messagesHash: messagesHash(messages, tools) };
    try {
      await at.journalStep({ sequence: at.seq, kind: 'MODEL_CALL', state: 'STARTED', model, request });
    } catch (e) {
      if (e instanceof GraphQLRequestError && e.code === 'LIMIT_EXCEEDED')
        throw new AttemptFailure('LIMIT_EXCEEDED', e.message);
      throw e;
    }
    return { model, request };
  }

  /** Asks the model; its answer's end is held back. An unavailable model moves the chain on (null). */
  private async ask(
    model: string,
    request: unknown,
    messages: Message[],
    tools: FunctionTool[],
  ): Promise<AssistantMessage | null> {
    const { at, chain } = this;
    const t0 = Date.now();
    const step = { sequence: at.seq, kind: 'MODEL_CALL' as const, model, request };
    try {
      const provider = this.models.providerOf(model);
      const answer = await traceModelCall({ model, provider, sequence: at.seq, messages }, () =>
        this.models.chat(model, messages, tools, at.lease.signal, () => at.beforeSending()),
      );
      at.end({ ...step, state: 'COMPLETED', response: answer.message, usage: answer.usage }, true);
      const toolCalls = answer.message.tool_calls?.length ?? 0;
      const answered = { sequence: at.seq, model, ms: Date.now() - t0, toolCalls };
      at.log.info({ event: 'model.answered', ...answered, tokens: answer.usage.totalTokens }, 'model call');
      this.answered(model, answer.usage);
      at.next();
      return answer.message;
    } catch (e) {
      at.checkLease();
      if (!(e instanceof ModelUnavailableError || e instanceof ModelRequestError)) throw e;
      if (e instanceof ModelUnavailableError && e.notNow && this.lastOfChain(model)) {
        // the step stays STARTED: the next lease asks this model again, after the wait it named
        throw new Deferral(
          e.retryAfterMs || DEFER_WITHOUT_RETRY_AFTER_MS,
          `model ${model} answered HTTP ${e.status} (come back later)`,
        );
      }
      at.end({ ...step, state: 'FAILED', error: e.message.slice(0, 2000) }, true);
      at.log.warn({ event: 'model.failed', sequence: at.seq, model, err: e.name }, e.message);
      at.next();
      if (e instanceof ModelRequestError) throw new AttemptFailure('MODEL_ERROR', e.message);
      this.modelIndex = Math.max(this.modelIndex, chain.indexOf(model) + 1);
      if (this.modelIndex >= chain.length)
        throw new AttemptFailure('MODEL_UNAVAILABLE', `no model of ${chain.join(', ')} is available`);
      return null;
    }
  }

  /** Whether no model after `model` in the chain could be asked (none, or none with an endpoint). */
  private lastOfChain(model: string): boolean {
    return this.chain.slice(this.chain.indexOf(model) + 1).every((m) => !this.models.hasEndpoint(m));
  }

  private answered(model: string, usage: unknown) {
    this.lastModel = model;
    const u = (usage ?? {}) as { inputTokens?: number; outputTokens?: number };
    this.inputTokens += Number(u.inputTokens) || 0;
    this.outputTokens += Number(u.outputTokens) || 0;
  }
}
