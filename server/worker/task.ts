/**
 * One lease of one agent task: the model/tool loop (SPEC §4, §10, seed 004).
 *
 * The conversation is rebuilt from the journal on every lease by the same walk that runs new work: at
 * each sequence, a step already in the journal is consumed (a completed model call is its assistant
 * message, an ended tool call its tool message) and only what the journal lacks is executed. So a
 * finished model turn or tool call never runs twice; a write left STARTED is re-sent with its key; an
 * APPROVED call runs exactly as approved; a REJECTED one answers the model with the person's reason.
 */
import type { Logger } from 'pino';
import type { WorkerConfig } from './config.js';
import {
  type FunctionTool,
  initialMessages,
  type Message,
  messagesHash,
  parseFinalAnswer,
  promptHash,
  type ToolCall,
  toolFunctions,
  toolStepContent,
} from './conversation.js';
import {
  type AgentWork,
  DROP_CODES,
  type EngineClient,
  EngineRequestError,
  EngineUnreachableError,
  type JournalInput,
  type JournalResult,
  type LockedTask,
  type Step,
  type ToolBinding,
} from './graphql.js';
import { LeaseKeeper } from './lease.js';
import { type ModelClient, ModelRequestError, ModelUnavailableError } from './model.js';
import { ToolOutcomeUnknownError, ToolSessions, ToolSetupError } from './mcp.js';

export type TaskOutcome = 'completed' | 'failed' | 'parked' | 'let-go' | 'dropped';

export interface TaskDeps {
  client: EngineClient;
  config: WorkerConfig;
  models: ModelClient;
  log: Logger;
  /** Aborted when the worker stops for good (after the grace period). */
  signal?: AbortSignal;
}

/** The attempt ends with this errorType (failTask). */
class AttemptFailure extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** Stop working on the task without reporting (parked by the engine, or left for the next lease). */
class LetGo extends Error {
  constructor(
    readonly outcome: 'parked' | 'let-go',
    message: string,
  ) {
    super(message);
  }
}

export async function runTask(task: LockedTask, deps: TaskDeps): Promise<TaskOutcome> {
  const log = deps.log.child({
    taskId: task.id,
    attempt: task.attempt,
    processInstanceId: task.processInstanceId,
    nodeId: task.nodeId,
  });
  const lease = new LeaseKeeper(
    deps.client,
    task,
    deps.config.workerId,
    deps.config.lockMs,
    log,
    deps.signal,
  );
  const run = new TaskRun(task, deps, log, lease);
  lease.start();
  try {
    return await run.run();
  } finally {
    lease.stop();
    await run.sessions.closeAll();
  }
}

class TaskRun {
  readonly sessions: ToolSessions;
  private readonly work: AgentWork | null;
  private readonly journal = new Map<number, Step>();
  private readonly started = Date.now();
  private messages: Message[] = [];
  private tools: FunctionTool[] = [];
  private byName = new Map<string, ToolBinding>();
  private seq = 1;
  /** Index in [model, ...fallbackModels]; an unavailable model moves it on for the rest of the task. */
  private modelIndex = 0;
  private lastModel: string | null = null;
  private readonly used = new Set<string>();
  private inputTokens = 0;
  private outputTokens = 0;

  constructor(
    private readonly task: LockedTask,
    private readonly deps: TaskDeps,
    private readonly log: Logger,
    private readonly lease: LeaseKeeper,
  ) {
    this.work = task.agentWork;
    for (const s of task.steps) if (s.attempt === task.attempt) this.journal.set(s.sequence, s);
    this.sessions = new ToolSessions({
      timeoutMs: deps.config.toolTimeoutMs,
      allowedTools: deps.config.allowedTools,
      credential: async (server) => {
        const c = await deps.client.toolCredential(task.id, server, deps.config.workerId, this.retry());
        return { secret: c.secret, env: c.env };
      },
    });
  }

  private get chain(): string[] {
    return this.work ? [this.work.model, ...this.work.fallbackModels] : [];
  }

  /** Engine calls are idempotent: retry an unreachable engine while our lease may still be live. */
  private retry() {
    return { retryUntil: Date.now() + this.deps.config.lockMs, signal: this.lease.signal };
  }

  async run(): Promise<TaskOutcome> {
    this.log.info(
      { event: 'task.start', journaled: this.journal.size, workerId: this.deps.config.workerId },
      'task leased',
    );
    try {
      if (!this.work) throw new AttemptFailure('NO_AGENT_WORK', 'the task carries no agentWork');
      const schemas = await this.sessions.check(this.work.toolBindings);
      ({ tools: this.tools, byName: this.byName } = toolFunctions(this.work.toolBindings, schemas));
      this.messages = initialMessages(this.work);
      let pending: ToolCall[] = [];
      for (;;) {
        this.checkLease();
        const call = pending.shift();
        if (call) {
          const content = await this.toolCall(call);
          this.messages.push({ role: 'tool', tool_call_id: call.id, content });
          continue;
        }
        const answer = await this.modelTurn();
        this.messages.push(answer);
        if (answer.tool_calls?.length) pending = [...answer.tool_calls];
        else return await this.finish(answer.content);
      }
    } catch (e) {
      return await this.settle(e);
    }
  }

  private checkLease() {
    if (this.lease.signal.aborted) throw new LetGo('let-go', this.lease.reason ?? 'aborted');
  }

  private async settle(e: unknown): Promise<TaskOutcome> {
    if (this.lease.signal.aborted) {
      this.log.info({ event: 'task.dropped', reason: this.lease.reason }, 'stopped working on the task');
      return 'dropped';
    }
    if (e instanceof LetGo) {
      this.log.info({ event: `task.${e.outcome}`, sequence: this.seq, reason: e.message }, 'let the task go');
      return e.outcome;
    }
    if (e instanceof EngineRequestError && DROP_CODES.has(e.code)) {
      this.log.info({ event: 'task.dropped', code: e.code }, 'the engine took the task back; dropping it');
      return 'dropped';
    }
    if (e instanceof EngineUnreachableError) {
      this.log.warn(
        { event: 'task.let-go', err: e.message },
        'the engine is unreachable; the lease will lapse',
      );
      return 'let-go';
    }
    let failure: AttemptFailure;
    if (e instanceof AttemptFailure) failure = e;
    else if (e instanceof ToolSetupError) failure = new AttemptFailure(e.errorType, e.message);
    else if (e instanceof EngineRequestError)
      failure = new AttemptFailure(
        e.code === 'LIMIT_EXCEEDED' ? 'LIMIT_EXCEEDED' : 'JOURNAL_REFUSED',
        `${e.code}: ${e.message}`,
      );
    else failure = new AttemptFailure('WORKER_ERROR', e instanceof Error ? e.message : String(e));
    return this.fail(failure);
  }

  private async fail(f: AttemptFailure): Promise<TaskOutcome> {
    this.log.warn({ event: 'task.fail', errorType: f.errorType, sequence: this.seq }, f.message);
    try {
      await this.deps.client.failTask(
        {
          taskId: this.task.id,
          workerId: this.deps.config.workerId,
          attempt: this.task.attempt,
          errorType: f.errorType,
          errorMessage: f.message.slice(0, 2000),
          metadata: this.metadata(),
        },
        this.retry(),
      );
      return 'failed';
    } catch (e) {
      if (e instanceof EngineRequestError && DROP_CODES.has(e.code)) return 'dropped';
      this.log.error({ event: 'task.fail_unreported', err: String(e) }, 'could not report the failure');
      return 'let-go';
    }
  }

  private metadata() {
    const model = this.lastModel ?? this.work?.model;
    return {
      model: model ?? undefined,
      provider: model ? this.deps.models.providerOf(model) : undefined,
      attempt: this.task.attempt,
      durationMs: Date.now() - this.started,
      tools: [...this.used],
      resultVariable: this.work?.resultVariable,
      promptHash: this.messages.length ? promptHash(this.messages) : undefined,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
    };
  }

  private async journalStep(
    input: Omit<JournalInput, 'taskId' | 'workerId' | 'attempt'>,
  ): Promise<JournalResult> {
    const r = await this.deps.client.journalStep(
      { taskId: this.task.id, workerId: this.deps.config.workerId, attempt: this.task.attempt, ...input },
      this.retry(),
    );
    this.log.debug(
      { event: 'step', sequence: input.sequence, kind: input.kind, state: r.step.state, reused: r.reused },
      'journaled',
    );
    return r;
  }

  // ---- model turns -------------------------------------------------------------------------------

  private async modelTurn(): Promise<Extract<Message, { role: 'assistant' }>> {
    const chain = this.chain;
    for (;;) {
      this.checkLease();
      const existing = this.journal.get(this.seq);
      let model: string;
      if (existing) {
        if (existing.kind !== 'MODEL_CALL')
          throw new AttemptFailure(
            'JOURNAL_CONFLICT',
            `step ${this.seq} is a ${existing.kind}, a model call was due`,
          );
        model = existing.model ?? chain[this.modelIndex];
        if (existing.state === 'COMPLETED') {
          this.countTokens(existing.usage);
          this.lastModel = model;
          this.seq++;
          return existing.response as Extract<Message, { role: 'assistant' }>;
        }
        if (existing.state === 'FAILED') {
          this.modelIndex = Math.max(this.modelIndex, chain.indexOf(model) + 1);
          this.seq++;
          continue;
        }
        // STARTED: a crash during the call; the model never answered us, so ask it again.
      } else {
        while (this.modelIndex < chain.length && !this.deps.models.hasEndpoint(chain[this.modelIndex])) {
          this.log.warn({ event: 'model.no_endpoint', model: chain[this.modelIndex] }, 'skipping model');
          this.modelIndex++;
        }
        if (this.modelIndex >= chain.length)
          throw new AttemptFailure('MODEL_UNAVAILABLE', `no model of ${chain.join(', ')} is available`);
        model = chain[this.modelIndex];
        const request = { model, messagesHash: messagesHash(this.messages, this.tools) };
        try {
          await this.journalStep({
            sequence: this.seq,
            kind: 'MODEL_CALL',
            state: 'STARTED',
            model,
            request,
          });
        } catch (e) {
          if (e instanceof EngineRequestError && e.code === 'LIMIT_EXCEEDED')
            throw new AttemptFailure('LIMIT_EXCEEDED', e.message);
          throw e;
        }
      }
      const request = existing?.request ?? { model, messagesHash: messagesHash(this.messages, this.tools) };
      const t0 = Date.now();
      try {
        const answer = await this.deps.models.chat(model, this.messages, this.tools, this.lease.signal);
        await this.journalStep({
          sequence: this.seq,
          kind: 'MODEL_CALL',
          state: 'COMPLETED',
          model,
          request,
          response: answer.message,
          usage: answer.usage,
        });
        this.log.info(
          {
            event: 'model.answered',
            sequence: this.seq,
            model,
            ms: Date.now() - t0,
            toolCalls: answer.message.tool_calls?.length ?? 0,
            tokens: answer.usage.totalTokens,
          },
          'model call',
        );
        this.countTokens(answer.usage);
        this.lastModel = model;
        this.seq++;
        return answer.message;
      } catch (e) {
        this.checkLease();
        if (!(e instanceof ModelUnavailableError || e instanceof ModelRequestError)) throw e;
        await this.journalStep({
          sequence: this.seq,
          kind: 'MODEL_CALL',
          state: 'FAILED',
          model,
          request,
          error: e.message.slice(0, 2000),
        });
        this.log.warn({ event: 'model.failed', sequence: this.seq, model, err: e.name }, e.message);
        this.seq++;
        if (e instanceof ModelRequestError) throw new AttemptFailure('MODEL_ERROR', e.message);
        this.modelIndex = Math.max(this.modelIndex, chain.indexOf(model) + 1);
        if (this.modelIndex >= chain.length)
          throw new AttemptFailure('MODEL_UNAVAILABLE', `no model of ${chain.join(', ')} is available`);
      }
    }
  }

  private countTokens(usage: unknown) {
    const u = (usage ?? {}) as { inputTokens?: number; outputTokens?: number };
    this.inputTokens += Number(u.inputTokens) || 0;
    this.outputTokens += Number(u.outputTokens) || 0;
  }

  // ---- tool calls --------------------------------------------------------------------------------

  /** Runs (or replays from the journal) one tool call; returns the tool message content. */
  private async toolCall(call: ToolCall): Promise<string> {
    const name = call.function.name;
    const binding = this.byName.get(name);
    // Refusals that need no step: a pure function of the assistant message, so a rebuild repeats them.
    if (!binding)
      return `Error: there is no function named ${name}. Use one of: ${[...this.byName.keys()].join(', ')}.`;
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || '{}');
    } catch {
      return `Error: the arguments of ${name} are not valid JSON.`;
    }
    if (!args || typeof args !== 'object' || Array.isArray(args))
      return `Error: the arguments of ${name} must be a JSON object.`;
    const request = { callId: call.id, arguments: args };
    const existing = this.journal.get(this.seq);
    if (existing) {
      if (existing.kind !== 'TOOL_CALL' || existing.toolRef !== binding.ref) {
        throw new AttemptFailure(
          'JOURNAL_CONFLICT',
          `step ${this.seq} is ${existing.kind} ${existing.toolRef ?? ''}, the conversation asks for ${binding.ref}`,
        );
      }
      return this.advance(binding, existing, null, false);
    }
    if (binding.policy === 'READ') {
      const result = await this.invoke(binding, args as Record<string, unknown>, null);
      const r = await this.journalStep({
        sequence: this.seq,
        kind: 'TOOL_CALL',
        toolRef: binding.ref,
        request,
        ...(result.ok
          ? { state: 'COMPLETED', response: result.response }
          : { state: 'FAILED', error: result.error.slice(0, 4000) }),
      });
      return this.advance(binding, r.step, r, true);
    }
    let r: JournalResult;
    try {
      r = await this.journalStep({
        sequence: this.seq,
        kind: 'TOOL_CALL',
        toolRef: binding.ref,
        state: binding.policy === 'APPROVAL_REQUIRED' ? 'PROPOSED' : 'STARTED',
        request,
      });
    } catch (e) {
      // The engine refused the call itself (a delegation's inputs, its depth): tell the model, no step.
      if (e instanceof EngineRequestError && (e.code === 'VALIDATION_FAILED' || e.code === 'LIMIT_EXCEEDED'))
        return `Error: ${e.message}`;
      throw e;
    }
    return this.advance(binding, r.step, r, true);
  }

  /** Moves a tool step along its life until it ends (→ tool message) or the task must be let go. */
  private async advance(
    binding: ToolBinding,
    first: Step,
    answer: JournalResult | null,
    fresh: boolean,
  ): Promise<string> {
    let step = first;
    let taskState = answer?.taskState ?? 'LEASED';
    for (;;) {
      const at = { sequence: step.sequence, toolRef: binding.ref };
      switch (step.state) {
        case 'COMPLETED':
        case 'FAILED':
        case 'REJECTED':
        case 'OUTCOME_UNKNOWN': {
          const content = toolStepContent(step);
          if (content === null) throw new LetGo('let-go', `step ${step.sequence} waits for a person`);
          this.used.add(binding.ref);
          this.log.info({ event: 'tool.done', ...at, state: step.state, reused: step.reused }, 'tool step');
          this.seq++;
          return content;
        }
        case 'PROPOSED':
          this.log.info({ event: 'tool.proposed', ...at }, 'waiting for approval');
          throw new LetGo('parked', `step ${step.sequence} waits for approval`);
        case 'APPROVED': {
          // Exactly the approved request (the person may have edited its arguments).
          const r = await this.journalStep({
            sequence: step.sequence,
            kind: 'TOOL_CALL',
            toolRef: binding.ref,
            state: 'STARTED',
            request: step.request,
          });
          step = r.step;
          taskState = r.taskState;
          fresh = true;
          continue;
        }
        case 'STARTED': {
          if (binding.transport === 'delegate' || taskState === 'AWAITING_CHILD')
            throw new LetGo('parked', `step ${step.sequence} waits for its child process`);
          const key = step.idempotencyKey;
          if (!key && !fresh && binding.policy !== 'READ') {
            // A keyless write found in flight is never re-sent: a person states what happened.
            throw new AttemptFailure(
              'TOOL_OUTCOME_UNKNOWN',
              `${binding.ref} (step ${step.sequence}) was in flight`,
            );
          }
          if (key && !fresh)
            this.log.info({ event: 'tool.resend', ...at }, 're-sending a started write with its key');
          const args = (step.request?.arguments ?? {}) as Record<string, unknown>;
          const result = await this.invoke(binding, args, key);
          const r = await this.journalStep({
            sequence: step.sequence,
            kind: 'TOOL_CALL',
            toolRef: binding.ref,
            request: step.request,
            ...(result.ok
              ? { state: 'COMPLETED', response: result.response }
              : { state: 'FAILED', error: result.error.slice(0, 4000) }),
          });
          step = r.step;
          continue;
        }
      }
    }
  }

  /** Calls the tool; keyed writes are retried with the same key, an unknown outcome fails the attempt. */
  private async invoke(binding: ToolBinding, args: Record<string, unknown>, key: string | null) {
    const t0 = Date.now();
    for (let i = 0; ; i++) {
      this.checkLease();
      try {
        const result = await this.sessions.call(binding, args, key);
        this.log.info(
          {
            event: 'tool.called',
            sequence: this.seq,
            toolRef: binding.ref,
            ok: result.ok,
            ms: Date.now() - t0,
          },
          'tool call',
        );
        return result;
      } catch (e) {
        this.checkLease();
        if (!(e instanceof ToolOutcomeUnknownError)) throw e;
        this.log.warn({ event: 'tool.unknown', sequence: this.seq, toolRef: binding.ref }, e.message);
        if (binding.policy === 'READ') return { ok: false as const, error: e.message };
        if (!key || i >= 2) {
          // Keyless: the engine marks the step OUTCOME_UNKNOWN for a person. Keyed: the next attempt
          // re-sends it under the same key.
          throw new AttemptFailure(key ? 'TOOL_UNAVAILABLE' : 'TOOL_OUTCOME_UNKNOWN', e.message);
        }
        await new Promise((r) => setTimeout(r, 500 * 2 ** i));
      }
    }
  }

  // ---- the end -----------------------------------------------------------------------------------

  private async finish(content: string | null): Promise<TaskOutcome> {
    const parsed = parseFinalAnswer(content);
    if (!parsed.ok) throw new AttemptFailure('INVALID_MODEL_OUTPUT', parsed.reason);
    const work = this.work!;
    const metadata = {
      ...this.metadata(),
      ...(parsed.confidence !== null ? { confidence: parsed.confidence } : {}),
    };
    const done = await this.deps.client.completeTask(
      {
        taskId: this.task.id,
        workerId: this.deps.config.workerId,
        attempt: this.task.attempt,
        variables: { [work.resultVariable]: parsed.value },
        metadata,
      },
      this.retry(),
    );
    this.log.info(
      {
        event: 'task.completed',
        state: done.state,
        durationMs: metadata.durationMs,
        confidence: parsed.confidence,
      },
      'task completed',
    );
    return 'completed';
  }
}
