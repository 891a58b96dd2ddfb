/**
 * What the model turns and tool steps of one lease share: this attempt's journal and the cursor walking
 * it, the lease, the step ends held back for the next request, and the ways a step ends the attempt early.
 */
import type { Logger } from 'pino';
import {
  DROP_CODES,
  type EngineClient,
  GraphQLRequestError,
  isRetryable,
  type JournalResult,
  type LockedTask,
  type RequestOptions,
  type Step,
  type StepWrite,
} from './graphql.js';
import type { LeaseKeeper } from './lease.js';

/** The attempt ends with this errorType (failTask). */
export class AttemptFailure extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** Stop working on the task without reporting (parked by the engine, or left for the next lease). */
export class LetGo extends Error {
  constructor(
    readonly outcome: 'parked' | 'let-go',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Hand the task back (deferTask) without spending the attempt: the worker is stopping, or a model said
 * "not now" for too long. The journal stays as it is: whoever leases the task next asks a STARTED call again.
 */
export class Deferral extends Error {
  constructor(
    readonly retryAfterMs: number,
    message: string,
  ) {
    super(message);
  }
}

/** How a step the engine refused ends the attempt. */
export function refusal(e: GraphQLRequestError): AttemptFailure {
  return new AttemptFailure(
    e.code === 'LIMIT_EXCEEDED' ? 'LIMIT_EXCEEDED' : 'JOURNAL_REFUSED',
    `${e.code}: ${e.message}`,
  );
}

/** At most this many ends are held back (a batch holds up to 50 steps). */
const MAX_HELD = 40;

export class Attempt {
  /** The sequence due next, shared by model turns and tool steps: conversation order is journal order. */
  seq = 1;
  private readonly journal = new Map<number, Step>();
  /**
   * Step ends held back to travel with the next step in one `journalSteps` request; flushed before a write
   * or a model call goes out and before leaving the step sequence. A read may go out while only lossless
   * ends are held (a model's or a read's answer): a crash then loses what can be asked again, never a
   * write's outcome.
   */
  private pending: { end: StepWrite; lossless: boolean }[] = [];
  /** the highest sequence of the attempt seen so far (journaled before this lease, or by it) */
  private top = 0;

  constructor(
    readonly task: LockedTask,
    private readonly client: EngineClient,
    readonly workerId: string,
    private readonly lockMs: number,
    readonly lease: LeaseKeeper,
    readonly log: Logger,
  ) {
    for (const s of task.steps) {
      if (s.attempt !== task.attempt) continue;
      this.journal.set(s.sequence, s);
      this.top = Math.max(this.top, s.sequence);
    }
  }

  /** Moves the cursor past the step at it and the guard reads after it (SPEC §11: not conversation). */
  next(): void {
    this.seq++;
    this.skipGuards();
  }

  /** The sequence for a guard read of the call at the cursor: after everything the attempt holds. */
  nextFree(): number {
    return Math.max(this.top, this.seq) + 1;
  }

  private skipGuards(): void {
    for (;;) {
      const s = this.journal.get(this.seq);
      if (s ? s.purpose === 'CALL' : !this.guardsHere.has(this.seq)) return;
      this.seq++;
    }
  }

  /** Guard reads journaled by this lease (not in the journal the lease began with), by sequence. */
  private readonly guardsHere = new Map<number, string>();

  /** Whether a lookup of the call at `call` was journaled before the one at `except`. */
  lookedUpBefore(call: number, except: number): boolean {
    const looked = (seq: number, purpose: string | null | undefined) =>
      purpose === 'LOOKUP' && seq > call && seq !== except;
    for (const [seq, s] of this.journal) if (looked(seq, s.purpose)) return true;
    for (const [seq, purpose] of this.guardsHere) if (looked(seq, purpose)) return true;
    return false;
  }

  /** How many steps this attempt had already journaled when the lease began. */
  get journaled(): number {
    return this.journal.size;
  }

  /** The journaled step at the cursor, when a previous lease got that far. */
  existing(): Step | undefined {
    this.skipGuards();
    return this.journal.get(this.seq);
  }

  /** Engine calls are idempotent: retry an unreachable engine while our lease may still be live. */
  retry(): RequestOptions {
    return { retryUntil: Date.now() + this.lockMs, signal: this.lease.signal };
  }

  checkLease() {
    if (this.lease.signal.aborted) throw new LetGo('let-go', this.lease.reason ?? 'aborted');
  }

  /** Before anything external: the lease must surely hold by its local deadline (lease.ts), else nothing. */
  async beforeSending(): Promise<void> {
    this.checkLease();
    await this.lease.assure();
    this.checkLease();
  }

  /** Holds a step's end back for the next journalStep (or flush()); `lossless`: see `pending`. */
  end(input: StepWrite, lossless: boolean): void {
    this.pending.push({ end: input, lossless });
    this.seen(input);
  }

  /** Whether a read may go out now without flushing: only lossless ends are held, and not too many. */
  get readMayWait(): boolean {
    return this.pending.length < MAX_HELD && this.pending.every((p) => p.lossless);
  }

  /** The held ends, handed over (to travel with the task's completion); nothing is held after. */
  takeEnds(): StepWrite[] {
    const ends = this.pending.map((p) => p.end);
    this.pending = [];
    return ends;
  }

  private seen(input: StepWrite): void {
    this.top = Math.max(this.top, input.sequence);
    if (input.purpose && input.purpose !== 'CALL') this.guardsHere.set(input.sequence, input.purpose);
  }

  /**
   * Journals a step after the held ends, in one request. Refused because of this step, the batch rolled
   * the ends back: they go alone, then the step alone, so it meets its refusal as it would unbatched.
   */
  async journalStep(input: StepWrite): Promise<JournalResult> {
    const ends = this.takeEnds();
    if (ends.length === 0) return this.send(input);
    let results: JournalResult[];
    try {
      results = await this.client.journalSteps({ ...this.ids(), steps: [...ends, input] }, this.retry());
    } catch (e) {
      if (!(e instanceof GraphQLRequestError && e.details.index === ends.length)) throw endRefused(e);
      // refused after the engine committed what came before it (SPEC §11): the ends are journaled
      if (e.details.committed === true) throw e;
      await this.sendEnds(ends);
      return this.send(input);
    }
    for (const [i, end] of ends.entries()) this.logged(end, results[i]);
    return this.logged(input, results[ends.length]);
  }

  /** Journals the held ends alone; `opts` for a last try after the lease was aborted (stopping). */
  async flush(opts?: RequestOptions): Promise<void> {
    await this.sendEnds(this.takeEnds(), opts);
  }

  private async sendEnds(ends: StepWrite[], opts = this.retry()): Promise<void> {
    if (ends.length === 0) return;
    try {
      if (ends.length === 1) await this.send(ends[0], opts);
      else {
        const results = await this.client.journalSteps({ ...this.ids(), steps: ends }, opts);
        for (const [i, end] of ends.entries()) this.logged(end, results[i]);
      }
    } catch (e) {
      throw endRefused(e);
    }
  }

  private async send(input: StepWrite, opts = this.retry()): Promise<JournalResult> {
    return this.logged(input, await this.client.journalStep({ ...this.ids(), ...input }, opts));
  }

  ids() {
    return { taskId: this.task.id, workerId: this.workerId, attempt: this.task.attempt };
  }

  private logged(input: StepWrite, r: JournalResult): JournalResult {
    this.seen(input);
    const { sequence, kind } = input;
    this.log.debug({ event: 'step', sequence, kind, state: r.step.state, reused: r.reused }, 'journaled');
    return r;
  }
}

/**
 * A refused step end fails the attempt as it would have when journaled on its own, and never passes for
 * a refusal of the step sent with it (which the callers turn into a message for the model).
 */
function endRefused(e: unknown): unknown {
  return e instanceof GraphQLRequestError && !DROP_CODES.has(e.code) && !isRetryable(e) ? refusal(e) : e;
}
