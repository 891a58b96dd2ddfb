/**
 * One lease of one agent task: the model/tool loop (SPEC §4, §10). Every lease rebuilds the conversation
 * by the walk that runs new work: a step already journaled is consumed, only what the journal lacks runs.
 * So a finished turn or call never runs twice, a write left STARTED is re-sent with its key, an APPROVED
 * call runs exactly as approved, a REJECTED one answers the model with the person's reason.
 */
import type { Logger } from 'pino';
import { type ToolCallOf, traceAttempt, traceToolCall } from '../telemetry/index.js';
import { Attempt, AttemptFailure, Deferral, LetGo, refusal } from './attempt.js';
import type { WorkerConfig } from './config.js';
import {
  type FunctionTool,
  functionName,
  initialMessages,
  type Message,
  parseFinalAnswer,
  promptHash,
  type ToolCall,
} from './conversation.js';
import {
  type AgentWork,
  DROP_CODES,
  type EngineClient,
  GraphQLRequestError,
  isRetryable,
  type LockedTask,
  type RequestOptions,
} from './graphql.js';
import { LeaseKeeper } from './lease.js';
import { ToolServerBusyError, ToolSessions, ToolSetupError } from './mcp.js';
import type { ModelClient } from './model.js';
import { DEFER_WITHOUT_RETRY_AFTER_MS, ModelTurns } from './modelturns.js';
import { ToolSteps } from './toolsteps.js';

/** A parked or let-go tool call is no failure of its span. */
const isFailure = (e: unknown) => !(e instanceof LetGo);

export type TaskOutcome = 'completed' | 'failed' | 'parked' | 'let-go' | 'dropped' | 'deferred';

/** The deferral of a task whose worker is stopping: another worker may take it at once. */
export const SHUTDOWN = new Deferral(0, 'shutdown');

export interface TaskDeps {
  client: EngineClient;
  config: WorkerConfig;
  models: ModelClient;
  log: Logger;
  /** Aborted when the worker stops for good (after the grace period). */
  signal: AbortSignal;
  /** monotonicMs when the fetch that leased the task was first sent (the lease's local deadline) */
  leasedAfter: number;
}

export async function runTask(task: LockedTask, deps: TaskDeps): Promise<TaskOutcome> {
  const { id: taskId, attempt, processInstanceId, nodeId } = task;
  const log = deps.log.child({ taskId, attempt, processInstanceId, nodeId });
  const { client, config, signal, leasedAfter } = deps;
  const lease = new LeaseKeeper(client, task, config.workerId, config.lockMs, log, signal, leasedAfter);
  const run = new TaskRun(task, deps, log, lease);
  // the attempt's span: the lease's extensions, model and tool calls and journal requests are its children
  return traceAttempt(task, deps.config.workerId, async () => {
    lease.start();
    try {
      return await run.run();
    } finally {
      lease.stop();
      await run.sessions.closeAll();
    }
  });
}

class TaskRun {
  readonly sessions: ToolSessions;
  private readonly work: AgentWork | null;
  private readonly at: Attempt;
  private readonly turns: ModelTurns;
  private readonly steps: ToolSteps;
  private readonly started = Date.now();
  private messages: Message[] = [];
  private tools: FunctionTool[] = [];

  constructor(
    private readonly task: LockedTask,
    private readonly deps: TaskDeps,
    private readonly log: Logger,
    private readonly lease: LeaseKeeper,
  ) {
    this.work = task.agentWork;
    this.at = new Attempt(task, deps.client, deps.config.workerId, deps.config.lockMs, lease, log);
    this.sessions = new ToolSessions({
      timeoutMs: deps.config.toolTimeoutMs,
      elicitation: deps.config.elicitation,
      onElicitation: (n) => log.warn({ event: 'tool.elicitation', ...n }, 'a tool server asked for input'),
      allowedTools: deps.config.allowedTools,
      credential: (server) =>
        deps.client.toolCredential(task.id, server, deps.config.workerId, this.at.retry()),
    });
    const chain = this.work ? [this.work.model, ...this.work.fallbackModels] : [];
    this.turns = new ModelTurns(this.at, deps.models, chain);
    this.steps = new ToolSteps(this.at, this.sessions);
  }

  async run(): Promise<TaskOutcome> {
    const { journaled, workerId } = this.at;
    this.log.info({ event: 'task.start', journaled, workerId }, 'task leased');
    try {
      if (!this.work) throw new AttemptFailure('NO_AGENT_WORK', 'the task carries no agentWork');
      this.tools = await this.steps.bind(this.work.toolBindings);
      this.messages = initialMessages(this.work);
      let pending: ToolCall[] = [];
      for (;;) {
        this.at.checkLease();
        const call = pending.shift();
        if (call) {
          const content = await traceToolCall(this.toolCallOf(call), () => this.steps.call(call), isFailure);
          this.messages.push({ role: 'tool', tool_call_id: call.id, content });
          continue;
        }
        const answer = await this.turns.next(this.messages, this.tools);
        this.messages.push(answer);
        if (answer.tool_calls?.length) pending = [...answer.tool_calls];
        else return await this.finish(answer.content);
      }
    } catch (e) {
      return await this.settle(e);
    }
  }

  /** What the tool call's span says about it: names and ids (and the arguments, when content is captured). */
  private toolCallOf(call: ToolCall): ToolCallOf {
    const binding = this.work?.toolBindings.find((b) => functionName(b) === call.function.name);
    return {
      name: call.function.name,
      callId: call.id,
      sequence: this.at.seq,
      arguments: call.function.arguments,
      ref: binding?.ref,
      redact: binding?.redact,
      replayed: this.at.existing() !== undefined,
    };
  }

  private async settle(error: unknown): Promise<TaskOutcome> {
    const e = await this.flushBeforeLeaving(error);
    // stopping: the lease is handed back (one try, without the aborted lease's signal), not left to lapse
    if (this.lease.stopping) return deferTask(this.task, this.deps, this.log, SHUTDOWN, { timeoutMs: 5000 });
    if (e instanceof Deferral) return deferTask(this.task, this.deps, this.log, e, this.at.retry());
    if (e instanceof ToolServerBusyError) {
      const d = new Deferral(e.retryAfterMs || DEFER_WITHOUT_RETRY_AFTER_MS, e.message);
      return deferTask(this.task, this.deps, this.log, d, this.at.retry());
    }
    if (this.lease.signal.aborted) {
      this.log.info({ event: 'task.dropped', reason: this.lease.reason }, 'stopped working on the task');
      return 'dropped';
    }
    if (e instanceof LetGo) {
      this.log.info(
        { event: `task.${e.outcome}`, sequence: this.at.seq, reason: e.message },
        'let the task go',
      );
      return e.outcome;
    }
    if (e instanceof GraphQLRequestError && DROP_CODES.has(e.code)) {
      this.log.info({ event: 'task.dropped', code: e.code }, 'the engine took the task back; dropping it');
      return 'dropped';
    }
    if (isRetryable(e)) {
      this.log.warn(
        { event: 'task.let-go', err: (e as Error).message },
        'the engine is unreachable or its database is down; the lease will lapse',
      );
      return 'let-go';
    }
    if (e instanceof AttemptFailure) return this.fail(e);
    if (e instanceof ToolSetupError) return this.fail(new AttemptFailure(e.errorType, e.message));
    if (e instanceof GraphQLRequestError) return this.fail(refusal(e));
    return this.fail(new AttemptFailure('WORKER_ERROR', e instanceof Error ? e.message : String(e)));
  }

  /** No step's end stays in memory: refused, it fails the attempt; a lease aborted gives it a last try. */
  private async flushBeforeLeaving(e: unknown): Promise<unknown> {
    const aborted = this.lease.signal.aborted;
    try {
      await this.at.flush(aborted ? { timeoutMs: 5000 } : undefined);
      return e;
    } catch (refused) {
      return aborted ? e : refused;
    }
  }

  private async fail(f: AttemptFailure): Promise<TaskOutcome> {
    this.log.warn({ event: 'task.fail', errorType: f.errorType, sequence: this.at.seq }, f.message);
    try {
      const failure = { errorType: f.errorType, errorMessage: f.message.slice(0, 2000) };
      await this.deps.client.failTask(
        { ...this.at.ids(), ...failure, metadata: this.metadata() },
        this.at.retry(),
      );
      return 'failed';
    } catch (e) {
      if (e instanceof GraphQLRequestError && DROP_CODES.has(e.code)) return 'dropped';
      this.log.error({ event: 'task.fail_unreported', err: String(e) }, 'could not report the failure');
      return 'let-go';
    }
  }

  private metadata() {
    const model = this.turns.lastModel ?? this.work?.model;
    return {
      model: model ?? undefined,
      provider: model ? this.deps.models.providerOf(model) : undefined,
      attempt: this.task.attempt,
      durationMs: Date.now() - this.started,
      tools: [...this.steps.used],
      resultVariable: this.work?.resultVariable,
      promptHash: this.messages.length ? promptHash(this.messages) : undefined,
      inputTokens: this.turns.inputTokens,
      outputTokens: this.turns.outputTokens,
    };
  }

  private async finish(content: string | null): Promise<TaskOutcome> {
    const parsed = parseFinalAnswer(content);
    if (!parsed.ok) throw new AttemptFailure('INVALID_MODEL_OUTPUT', parsed.reason);
    const metadata = {
      ...this.metadata(),
      ...(parsed.confidence !== null ? { confidence: parsed.confidence } : {}),
    };
    // the last model call's end travels with the completion (journaled first, in the same request)
    const steps = this.at.takeEnds();
    const done = await this.deps.client.completeTask(
      {
        ...this.at.ids(),
        variables: { [this.work!.resultVariable]: parsed.value },
        metadata,
        ...(steps.length ? { steps } : {}),
      },
      this.at.retry(),
    );
    const ended = { state: done.state, durationMs: metadata.durationMs, confidence: parsed.confidence };
    this.log.info({ event: 'task.completed', ...ended }, 'task completed');
    return 'completed';
  }
}

/** Hands the task back (SPEC §15.3); refused (a write STARTED) or unreachable, the lease lapses instead. */
export async function deferTask(
  task: LockedTask,
  deps: Pick<TaskDeps, 'client' | 'config'>,
  log: Logger,
  d: Deferral,
  opts: RequestOptions,
): Promise<TaskOutcome> {
  // a day at most (an HTTP date far off must still fit GraphQL's Int); the engine cuts it further
  const retryAfterMs = Math.min(Math.max(0, Math.round(d.retryAfterMs)), 86_400_000);
  try {
    const { id: taskId, attempt } = task;
    const input = { taskId, workerId: deps.config.workerId, attempt, reason: d.message, retryAfterMs };
    const t = await deps.client.deferTask(input, opts);
    // past ABADA_MAX_DEFERRALS the engine counted this one as a failure of the attempt (errorType says so)
    const counted = t.attempt !== task.attempt || t.state === 'FAILED' ? { errorType: t.errorType } : {};
    log.info({ event: 'task.deferred', reason: d.message, retryAfterMs, ...counted }, 'handed the task back');
    return 'deferred';
  } catch (e) {
    if (e instanceof GraphQLRequestError && DROP_CODES.has(e.code)) return 'dropped';
    if (!(e instanceof GraphQLRequestError) && !isRetryable(e)) throw e;
    log.warn(
      { event: 'task.defer_refused', err: String(e) },
      'could not defer the task; its lease will lapse',
    );
    return 'let-go';
  }
}
