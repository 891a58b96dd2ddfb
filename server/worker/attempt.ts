/**
 * What the model turns and tool steps of one lease share: the journal of this attempt and the cursor
 * walking it, the lease, and the two ways a step can end the attempt early.
 */
import type { Logger } from 'pino';
import type { EngineClient, JournalInput, JournalResult, LockedTask, Step } from './graphql.js';
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

export type StepWrite = Omit<JournalInput, 'taskId' | 'workerId' | 'attempt'>;

export class Attempt {
  /**
   * The sequence due next. Model turns and tool steps share it: the conversation order is the journal
   * order, which is what lets a rebuild consume the journal by walking the conversation again.
   */
  seq = 1;
  private readonly journal = new Map<number, Step>();

  constructor(
    readonly task: LockedTask,
    private readonly client: EngineClient,
    readonly workerId: string,
    private readonly lockMs: number,
    readonly lease: LeaseKeeper,
    readonly log: Logger,
  ) {
    for (const s of task.steps) if (s.attempt === task.attempt) this.journal.set(s.sequence, s);
  }

  /** How many steps this attempt had already journaled when the lease began. */
  get journaled(): number {
    return this.journal.size;
  }

  /** The journaled step at the cursor, when a previous lease got that far. */
  existing(): Step | undefined {
    return this.journal.get(this.seq);
  }

  /** Engine calls are idempotent: retry an unreachable engine while our lease may still be live. */
  retry() {
    return { retryUntil: Date.now() + this.lockMs, signal: this.lease.signal };
  }

  checkLease() {
    if (this.lease.signal.aborted) throw new LetGo('let-go', this.lease.reason ?? 'aborted');
  }

  async journalStep(input: StepWrite): Promise<JournalResult> {
    const r = await this.client.journalStep(
      { taskId: this.task.id, workerId: this.workerId, attempt: this.task.attempt, ...input },
      this.retry(),
    );
    this.log.debug(
      { event: 'step', sequence: input.sequence, kind: input.kind, state: r.step.state, reused: r.reused },
      'journaled',
    );
    return r;
  }
}
