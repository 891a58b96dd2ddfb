/**
 * The journal calls of a worker's tasks, sent together: while this worker's earlier journal requests are
 * out, the next calls wait and go in one `journalBatch` request (one HTTP request, one engine
 * transaction): the engine's group commit (server/engine/journal/group.ts) one hop earlier. A call alone
 * goes out at once, as the very request it would be unbatched.
 *
 * Every call keeps the answer it would have had alone:
 *  - in a batch, the engine checks each entry as that call alone; an entry's refusal becomes the same
 *    GraphQLRequestError, code and details, for that call;
 *  - a batch without an answer, or refused as a whole, is sent again call by call with their own
 *    retries (the engine answers a re-sent step from the journal). An engine without `journalBatch`
 *    turns batching off for this client;
 *  - a call whose lease is aborted ends at once, as its own request would.
 * Each entry carries its call's `traceparent`, so the engine's span lands in its task's trace.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Turns } from '../shared/turns.js';
import {
  ClientError,
  type GraphQLErrorEntry,
  GraphQLRequestError,
  type RequestOptions,
  UnreachableError,
} from '../client/index.js';

/** One task's call as the batcher holds it (the worker's journalStep or journalSteps input). */
interface JournalCall<R> {
  taskId: string;
  workerId: string;
  attempt: number;
  traceparent?: string;
  steps: unknown[];
  opts: RequestOptions;
  /** the call sent alone (its own document and retries) */
  alone(): Promise<R[]>;
}

/** What a journalBatch request answered: per entry its results, or null with an error at its path. */
export interface BatchAnswer<R> {
  data?: { journalBatch: { results: R[] | null }[] } | null;
  errors?: GraphQLErrorEntry[];
}

type SendBatch<R> = (
  workerId: string,
  entries: { taskId: string; attempt: number; steps: unknown[]; traceparent?: string }[],
) => Promise<BatchAnswer<R>>;

/** Journal requests of this worker out at once before new calls wait to go together. */
const IN_FLIGHT = 2;
/** A request out longer than this (a slow step, a lock) lets one more go, up to MAX_IN_FLIGHT. */
const STALLED_MS = 25;
const MAX_IN_FLIGHT = 8;
/** The engine's bound on a journalBatch (schema.graphql: 1 to 32 entries). */
const MAX_BATCH_TASKS = 32;

interface Held<R> {
  call: JournalCall<R>;
  run: <T>(fn: () => T) => T;
  resolve(out: R[]): void;
  reject(e: unknown): void;
  done: boolean;
  /** ends the call when its lease is aborted */
  onAbort?: () => void;
}

export class JournalBatcher<R> {
  private readonly turns = new Turns<Held<R>>({
    inFlight: IN_FLIGHT,
    stalledMs: STALLED_MS,
    maxInFlight: MAX_IN_FLIGHT,
    maxTurn: MAX_BATCH_TASKS,
    key: (h) => h.call.taskId,
    // a batch names one worker
    joins: (first, h) => h.call.workerId === first.call.workerId,
    run: (turn) => this.dispatch(turn),
    // calls made in the same turn of the event loop go together
    defer: true,
  });
  /** requests sent and calls carried (for tests and the bench) */
  readonly counts = { calls: 0, requests: 0, batches: 0, batched: 0, fallbacks: 0 };

  /** `batching: false`: every call alone (turned off too when the engine has no journalBatch) */
  constructor(
    private readonly sendBatch: SendBatch<R>,
    private batching = true,
  ) {}

  send(call: JournalCall<R>): Promise<R[]> {
    this.counts.calls++;
    if (!this.batching || call.opts.signal?.aborted) return this.alone(call);
    return new Promise<R[]>((resolve, reject) => {
      const held: Held<R> = { call, run: AsyncLocalStorage.snapshot(), resolve, reject, done: false };
      const signal = call.opts.signal;
      if (signal) {
        held.onAbort = () =>
          this.finish(held, () => {
            this.turns.remove(held);
            reject(new UnreachableError('The journal request was aborted.', { cause: signal.reason }));
          });
        signal.addEventListener('abort', held.onAbort, { once: true });
      }
      this.turns.push(held);
    });
  }

  private alone(call: JournalCall<R>): Promise<R[]> {
    this.counts.requests++;
    return call.alone();
  }

  private async dispatch(turn: Held<R>[]): Promise<void> {
    if (turn.length === 1) return this.settleAlone(turn[0]);
    this.counts.requests++;
    this.counts.batches++;
    this.counts.batched += turn.length;
    let answer: BatchAnswer<R>;
    try {
      answer = await turn[0].run(() =>
        this.sendBatch(
          turn[0].call.workerId,
          turn.map(({ call }) => ({
            taskId: call.taskId,
            attempt: call.attempt,
            steps: call.steps,
            ...(call.traceparent ? { traceparent: call.traceparent } : {}),
          })),
        ),
      );
    } catch (e) {
      // no answer, or a refused request: each call on its own, with its own retries (a re-sent step is
      // answered from the journal). Anything else is a bug, answered to every call of the turn.
      if (!(e instanceof ClientError)) {
        for (const h of turn) this.finish(h, () => h.reject(e));
        return;
      }
      return this.fallBack(turn);
    }
    const entries = answer.data?.journalBatch;
    if (!entries || entries.length !== turn.length) {
      // refused as a whole: an engine without journalBatch, or one that cannot serve now
      if (answer.errors?.some((e) => e.extensions?.code === 'GRAPHQL_VALIDATION_FAILED'))
        this.batching = false;
      return this.fallBack(turn);
    }
    const again: Held<R>[] = [];
    for (const [i, h] of turn.entries()) {
      const results = entries[i].results;
      const error = answer.errors?.find((e) => e.path?.[1] === i);
      if (results) this.finish(h, () => h.resolve(results));
      // no error for it (cannot happen), or the database was away: alone, with the call's own retries
      else if (!error || (error.extensions?.code === 'UNAVAILABLE' && h.call.opts.retryUntil !== undefined))
        again.push(h);
      else this.finish(h, () => h.reject(new GraphQLRequestError([error], 200)));
    }
    if (again.length) await this.fallBack(again);
  }

  private async fallBack(turn: Held<R>[]): Promise<void> {
    this.counts.fallbacks += turn.length;
    await Promise.all(turn.map((h) => this.settleAlone(h)));
  }

  private async settleAlone(h: Held<R>): Promise<void> {
    if (h.done) return;
    try {
      const out = await h.run(() => this.alone(h.call));
      this.finish(h, () => h.resolve(out));
    } catch (e) {
      this.finish(h, () => h.reject(e));
    }
  }

  private finish(h: Held<R>, fn: () => void): void {
    if (h.done) return;
    h.done = true;
    if (h.onAbort) h.call.opts.signal?.removeEventListener('abort', h.onAbort);
    fn();
  }
}
