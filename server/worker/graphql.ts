/**
 * The worker's only channel to the engine: the GraphQL contract over HTTP (`POST ${url}/graphql`,
 * `Authorization: Bearer <token>`). Nothing here knows the engine's internals, so any other worker could
 * be written against the same documents.
 */

export interface ToolBinding {
  ref: string;
  server: string;
  tool: string;
  policy: 'READ' | 'WRITE' | 'APPROVAL_REQUIRED';
  idempotency: 'KEY' | 'NONE';
  transport: string;
  url: string;
  command: string | null;
  args: string[];
  credential: string | null;
  credentialEnv: string | null;
  inputSchemaSha256: string | null;
  editable: boolean;
}

export interface AgentWork {
  profileVersion: string;
  model: string;
  fallbackModels: string[];
  prompt: string;
  inputs: Record<string, unknown>;
  resultVariable: string;
  outputSchema: unknown;
  confidenceThreshold: number | null;
  limits: { maxTurns: number | null; maxTokensTotal: number | null; budgetUsd: number | null };
  toolBindings: ToolBinding[];
}

export type StepState =
  | 'PROPOSED'
  | 'APPROVED'
  | 'REJECTED'
  | 'STARTED'
  | 'COMPLETED'
  | 'FAILED'
  | 'OUTCOME_UNKNOWN';

export interface Step {
  attempt: number;
  sequence: number;
  kind: 'MODEL_CALL' | 'TOOL_CALL';
  state: StepState;
  toolRef: string | null;
  model: string | null;
  request: { callId?: string; arguments?: Record<string, unknown>; [k: string]: unknown };
  response: unknown;
  error: string | null;
  digest: string;
  idempotencyKey: string | null;
  comment: string | null;
  reused: boolean;
  usage: unknown;
  approvalId: string | null;
}

export interface LockedTask {
  id: string;
  topicName: string;
  projectId: string;
  processInstanceId: string;
  nodeId: string;
  attempt: number;
  lockExpiresAt: string;
  variables: Record<string, unknown>;
  agentWork: AgentWork | null;
  steps: Step[];
}

export type TaskState =
  | 'OPEN'
  | 'LEASED'
  | 'AWAITING_APPROVAL'
  | 'AWAITING_CHILD'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED';

export interface JournalResult {
  step: Step;
  idempotencyKey: string | null;
  reused: boolean;
  taskState: TaskState;
}

export interface JournalInput {
  taskId: string;
  workerId: string;
  attempt: number;
  sequence: number;
  kind: 'MODEL_CALL' | 'TOOL_CALL';
  state: StepState;
  toolRef?: string;
  model?: string;
  request: unknown;
  response?: unknown;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
  error?: string;
}

/** One step as the attempt writes it (the task, worker and attempt are the request's). */
export type StepWrite = Omit<JournalInput, 'taskId' | 'workerId' | 'attempt'>;

export interface AttemptMetadata {
  model?: string;
  provider?: string;
  attempt?: number;
  durationMs?: number;
  tools?: string[];
  resultVariable?: string;
  promptHash?: string;
  confidence?: number;
  inputTokens?: number;
  outputTokens?: number;
}

/** The engine answered with a GraphQL error; `code` is its `extensions.code`. */
export class EngineRequestError extends Error {
  override name = 'EngineRequestError';
  constructor(
    readonly code: string,
    message: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The engine could not be reached (connection refused, reset, a gateway error, a timeout). */
export class EngineUnreachableError extends Error {
  override name = 'EngineUnreachableError';
}

/** Codes after which the worker must drop the task: someone else owns it, or it no longer exists. */
export const DROP_CODES: ReadonlySet<string> = new Set([
  'LEASE_NOT_HELD',
  'WORK_RETIRED',
  'ATTEMPT_MISMATCH',
]);

const STEP_FIELDS = `attempt sequence kind state toolRef model request response error digest idempotencyKey
  comment reused usage approvalId`;

const Q = {
  register: `mutation($input: RegisterWorkerInput!) { registerWorker(input: $input) { workerId health } }`,
  fetch: `mutation($input: FetchAndLockInput!) { fetchAndLock(input: $input) {
    id topicName projectId processInstanceId nodeId attempt lockExpiresAt variables
    agentWork { profileVersion model fallbackModels prompt inputs resultVariable outputSchema confidenceThreshold
      limits { maxTurns maxTokensTotal budgetUsd }
      toolBindings { ref server tool policy idempotency transport url command args credential credentialEnv
        inputSchemaSha256 editable } }
    steps { ${STEP_FIELDS} }
  } }`,
  extend: `mutation($input: ExtendLockInput!) { extendLock(input: $input) { id lockExpiresAt } }`,
  journal: `mutation($input: JournalStepInput!) { journalStep(input: $input) {
    idempotencyKey reused taskState step { ${STEP_FIELDS} } } }`,
  journalSteps: `mutation($input: JournalStepsInput!) { journalSteps(input: $input) {
    idempotencyKey reused taskState step { ${STEP_FIELDS} } } }`,
  complete: `mutation($input: CompleteTaskInput!) { completeTask(input: $input) { id state attempt } }`,
  fail: `mutation($input: FailTaskInput!) { failTask(input: $input) { id state attempt } }`,
  credential: `query($taskId: ID!, $server: String!, $workerId: String!) {
    toolCredential(taskId: $taskId, server: $server, workerId: $workerId) { server name secret env } }`,
};

export interface RequestOptions {
  signal?: AbortSignal;
  /** Retry on EngineUnreachableError with backoff until this time (epoch ms); only for idempotent calls. */
  retryUntil?: number;
  /** Client-side timeout of one HTTP request. */
  timeoutMs?: number;
}

export class EngineClient {
  readonly endpoint: string;

  constructor(
    engineUrl: string,
    private readonly token: string,
  ) {
    this.endpoint = `${engineUrl.replace(/\/+$/, '')}/graphql`;
  }

  async request<T>(query: string, variables: Record<string, unknown>, opts: RequestOptions = {}): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await this.once<T>(query, variables, opts);
      } catch (e) {
        const retry =
          e instanceof EngineUnreachableError &&
          opts.retryUntil !== undefined &&
          Date.now() < opts.retryUntil &&
          !opts.signal?.aborted;
        if (!retry) throw e;
        const wait = Math.min(backoffMs(i, 200, 5000), Math.max(opts.retryUntil! - Date.now(), 0));
        await sleep(wait, opts.signal);
      }
    }
  }

  private async once<T>(query: string, variables: Record<string, unknown>, opts: RequestOptions): Promise<T> {
    const signals = [AbortSignal.timeout(opts.timeoutMs ?? 30_000)];
    if (opts.signal) signals.push(opts.signal);
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.any(signals),
      });
    } catch (e) {
      throw new EngineUnreachableError(`The engine at ${this.endpoint} is unreachable: ${causeOf(e)}`);
    }
    let body: { data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] };
    try {
      body = (await res.json()) as typeof body;
    } catch (e) {
      throw new EngineUnreachableError(
        `The engine at ${this.endpoint} answered HTTP ${res.status} without a GraphQL body: ${causeOf(e)}`,
      );
    }
    if (body.errors?.length) {
      const err = body.errors[0];
      const code = typeof err.extensions?.code === 'string' ? err.extensions.code : 'UNKNOWN';
      throw new EngineRequestError(code, err.message, err.extensions ?? {});
    }
    if (!res.ok || !body.data) {
      throw new EngineUnreachableError(`The engine at ${this.endpoint} answered HTTP ${res.status}.`);
    }
    return body.data;
  }

  async registerWorker(
    input: { workerId: string; topics: string[]; models?: string[] },
    opts?: RequestOptions,
  ) {
    return (await this.request<{ registerWorker: unknown }>(Q.register, { input }, opts)).registerWorker;
  }

  async fetchAndLock(
    input: {
      workerId: string;
      maxTasks: number;
      topics: { topicName: string; lockDurationMs: number }[];
      asyncResponseTimeoutMs: number;
    },
    opts: RequestOptions = {},
  ): Promise<LockedTask[]> {
    const timeoutMs = input.asyncResponseTimeoutMs + 30_000;
    return (await this.request<{ fetchAndLock: LockedTask[] }>(Q.fetch, { input }, { ...opts, timeoutMs }))
      .fetchAndLock;
  }

  async extendLock(
    input: { taskId: string; workerId: string; attempt: number; lockDurationMs: number },
    opts?: RequestOptions,
  ) {
    return (await this.request<{ extendLock: { lockExpiresAt: string } }>(Q.extend, { input }, opts))
      .extendLock;
  }

  async journalStep(input: JournalInput, opts?: RequestOptions): Promise<JournalResult> {
    return (await this.request<{ journalStep: JournalResult }>(Q.journal, { input }, opts)).journalStep;
  }

  /**
   * Several steps of one attempt in one request and one transaction, in order, all or nothing; a
   * refusal names the failing step's index in `extensions.index`. A step that parks the task must be
   * the last one.
   */
  async journalSteps(
    input: { taskId: string; workerId: string; attempt: number; steps: StepWrite[] },
    opts?: RequestOptions,
  ): Promise<JournalResult[]> {
    return (await this.request<{ journalSteps: JournalResult[] }>(Q.journalSteps, { input }, opts))
      .journalSteps;
  }

  async completeTask(
    input: {
      taskId: string;
      workerId: string;
      attempt: number;
      variables: Record<string, unknown>;
      metadata: AttemptMetadata;
    },
    opts?: RequestOptions,
  ) {
    return (await this.request<{ completeTask: { state: TaskState } }>(Q.complete, { input }, opts))
      .completeTask;
  }

  async failTask(
    input: {
      taskId: string;
      workerId: string;
      attempt: number;
      errorType: string;
      errorMessage?: string;
      retryTimeoutMs?: number;
      metadata?: AttemptMetadata;
    },
    opts?: RequestOptions,
  ) {
    return (await this.request<{ failTask: { state: TaskState; attempt: number } }>(Q.fail, { input }, opts))
      .failTask;
  }

  async toolCredential(taskId: string, server: string, workerId: string, opts?: RequestOptions) {
    return (
      await this.request<{
        toolCredential: { server: string; name: string; secret: string; env: string | null };
      }>(Q.credential, { taskId, server, workerId }, opts)
    ).toolCredential;
  }
}

/** Exponential backoff with full jitter: a random wait in [base·2^i / 2, base·2^i], capped. */
export function backoffMs(attempt: number, baseMs = 500, capMs = 30_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
}
