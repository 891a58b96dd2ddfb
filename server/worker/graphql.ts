/**
 * The worker's only channel to the engine: the GraphQL contract through the shared client. Its types are
 * the typed documents' results, so they follow schema.graphql, never the engine's internals.
 */
import {
  type GraphQLClient,
  createClient,
  type RequestOptions,
  type ResultOf,
  type TadaDocumentNode,
  type TokenSource,
  type VariablesOf,
} from '../client/index.js';
import { traceHeaders } from '../telemetry/index.js';
import { type BatchAnswer, JournalBatcher } from './batcher.js';
import {
  CompleteTask,
  DeferTask,
  ExtendLock,
  FailTask,
  FetchAndLock,
  JournalBatch,
  JournalStep,
  JournalSteps,
  RegisterWorker,
  ToolCredential,
} from '../client/documents.js';

export {
  backoffMs,
  GraphQLRequestError,
  isRetryable,
  type RequestOptions,
  sleep,
  type TokenSource,
} from '../client/index.js';

export type LockedTask = ResultOf<typeof FetchAndLock>['fetchAndLock'][number];
export type AgentWork = NonNullable<LockedTask['agentWork']>;
export type ToolBinding = AgentWork['toolBindings'][number];
export type Step = LockedTask['steps'][number];
export type JournalResult = ResultOf<typeof JournalStep>['journalStep'];
/** One step as the attempt writes it (the task, worker and attempt are the request's). */
export type StepWrite = VariablesOf<typeof JournalSteps>['input']['steps'][number];

/** Codes after which the worker must drop the task: someone else owns it, or it no longer exists. */
export const DROP_CODES: ReadonlySet<string> = new Set([
  'LEASE_NOT_HELD',
  'WORK_RETIRED',
  'ATTEMPT_MISMATCH',
]);

/** The engine's mutations and queries a worker sends, one method each. */
export class EngineClient {
  private readonly client: GraphQLClient;
  /** the journal calls of this worker's tasks, sent together when several are ready at once (batcher.ts) */
  readonly journal: JournalBatcher<JournalResult>;

  /** `batchJournal: false` sends every journal call on its own (ABADA_WORKER_JOURNAL_BATCH=false) */
  constructor(engineUrl: string, token: string | TokenSource, opts: { batchJournal?: boolean } = {}) {
    this.client = createClient({ url: engineUrl, token, headers: traceHeaders });
    this.journal = new JournalBatcher<JournalResult>(
      async (workerId, entries) =>
        (await this.client.execute(JournalBatch, {
          input: { workerId, entries: entries as VariablesOf<typeof JournalBatch>['input']['entries'] },
        })) as BatchAnswer<JournalResult>,
      opts.batchJournal !== false,
    );
  }

  /** The mutation `doc` of one `input`: its field's answer. */
  private mutation<I, F extends string, R>(doc: TadaDocumentNode<Record<F, R>, { input: I }>, field: F) {
    return async (input: I, opts?: RequestOptions): Promise<R> =>
      (await this.client.request(doc, { input }, opts))[field];
  }

  readonly registerWorker = this.mutation(RegisterWorker, 'registerWorker');
  readonly extendLock = this.mutation(ExtendLock, 'extendLock');
  readonly completeTask = this.mutation(CompleteTask, 'completeTask');
  readonly failTask = this.mutation(FailTask, 'failTask');
  /** Hands the lease back without spending the attempt (SPEC §15.3). */
  readonly deferTask = this.mutation(DeferTask, 'deferTask');

  /** A long poll: the HTTP request may last the engine's wait plus a margin. */
  async fetchAndLock(
    input: VariablesOf<typeof FetchAndLock>['input'] & { asyncResponseTimeoutMs: number },
    opts: RequestOptions = {},
  ): Promise<LockedTask[]> {
    const timeoutMs = input.asyncResponseTimeoutMs + 30_000;
    return (await this.client.request(FetchAndLock, { input }, { ...opts, timeoutMs })).fetchAndLock;
  }

  async journalStep(input: VariablesOf<typeof JournalStep>['input'], opts: RequestOptions = {}) {
    const { taskId, workerId, attempt, ...step } = input;
    const alone = async () => [(await this.client.request(JournalStep, { input }, opts)).journalStep];
    return (await this.journaled({ taskId, workerId, attempt, steps: [step] }, opts, alone))[0];
  }

  /**
   * Steps of one attempt in one transaction, in order, all or nothing; a refusal names the failing step's
   * `details.index`. A step that parks the task must be the last.
   */
  async journalSteps(input: VariablesOf<typeof JournalSteps>['input'], opts: RequestOptions = {}) {
    const alone = async () => (await this.client.request(JournalSteps, { input }, opts)).journalSteps;
    return this.journaled(input, opts, alone);
  }

  private journaled(
    call: { taskId: string | number; workerId: string; attempt: number; steps: unknown[] },
    opts: RequestOptions,
    alone: () => Promise<JournalResult[]>,
  ): Promise<JournalResult[]> {
    const { traceparent } = traceHeaders();
    return this.journal.send({ ...call, taskId: String(call.taskId), traceparent, opts, alone });
  }

  async toolCredential(taskId: string, server: string, workerId: string, opts?: RequestOptions) {
    return (await this.client.request(ToolCredential, { taskId, server, workerId }, opts)).toolCredential;
  }
}
