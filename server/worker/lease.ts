/**
 * Keeps a task's lease alive while the worker works on it: `extendLock` every lockMs/3. When the engine
 * says the lease is gone (DROP_CODES) the run is aborted, so the worker never acts on work someone else
 * now owns; an unreachable engine is retried on the next tick (the lease may still be live).
 *
 * The local deadline: cut off from the engine, the worker hears nothing while the lease runs out and
 * another worker takes the task over. The engine ends each lease it confirmed lockMs after it handled the
 * request, which is after the worker SENT it, so the lease lasts at least until `sentAt + lockMs` of the
 * last confirmed request, on this process's monotonic clock whatever the engine's or PostgreSQL's clocks
 * say, less a margin for the time from the check to the tool. Past that deadline, before anything
 * external is sent, the worker makes one extendLock; unconfirmed, the task is dropped and nothing sent.
 */
import type { Logger } from 'pino';
import { DROP_CODES, type EngineClient, GraphQLRequestError } from './graphql.js';

/** The margin kept before the local deadline: a tenth of the lease, from 100 ms to 5 s. */
export function leaseMargin(lockMs: number): number {
  return Math.min(5000, Math.max(100, Math.floor(lockMs / 10)));
}

/** A monotonic clock in milliseconds (a wall-clock step never lengthens a lease). */
export const monotonicMs = (): number => performance.now();

export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private readonly controller = new AbortController();
  /** Why the run was aborted (lease lost, worker stopping), once it was. */
  reason: string | null = null;
  /** The run was aborted because the worker is stopping (the lease itself may still hold). */
  stopping = false;
  private readonly onParentAbort = () => this.abortForStop();
  /** Until when (monotonicMs) the lease surely holds, margin taken off. */
  private deadline: number;

  constructor(
    private readonly client: EngineClient,
    private readonly task: { id: string; attempt: number },
    private readonly workerId: string,
    private readonly lockMs: number,
    private readonly log: Logger,
    private readonly parent: AbortSignal,
    /** monotonicMs when the fetch that took this lease was first sent */
    leasedAfter: number,
  ) {
    this.deadline = leasedAfter + lockMs - leaseMargin(lockMs);
    if (parent.aborted) this.abortForStop();
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Milliseconds left before the lease may have lapsed (negative once past). */
  remainingMs(): number {
    return this.deadline - monotonicMs();
  }

  private abortForStop(): void {
    if (!this.controller.signal.aborted) this.stopping = true;
    this.abort('the worker is stopping');
  }

  abort(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.reason = reason;
    this.controller.abort(new Error(reason));
    this.stop();
  }

  /** Resolves when the lease surely holds now, else aborts the run; a round trip only past the deadline. */
  async assure(): Promise<void> {
    if (this.signal.aborted || this.remainingMs() > 0) return;
    const ok = await this.extend(Math.max(Math.floor(this.lockMs / 2), 100));
    if (!ok || this.remainingMs() <= 0)
      this.abort('the lease may have lapsed: the engine has not confirmed it in time');
  }

  /** One extendLock; true when the engine confirmed the lease (the deadline moves on). */
  private async extend(timeoutMs: number): Promise<boolean> {
    const sentAt = monotonicMs();
    try {
      const { id: taskId, attempt } = this.task;
      const lease = { taskId, workerId: this.workerId, attempt, lockDurationMs: this.lockMs };
      await this.client.extendLock(lease, { timeoutMs, signal: this.signal });
      this.deadline = Math.max(this.deadline, sentAt + this.lockMs - leaseMargin(this.lockMs));
      return true;
    } catch (e) {
      if (e instanceof GraphQLRequestError && DROP_CODES.has(e.code)) {
        this.log.warn({ event: 'lease.lost', code: e.code }, 'the lease is gone; dropping the task');
        this.abort(`lease lost: ${e.code}`);
        return false;
      }
      if (!this.signal.aborted)
        this.log.warn({ event: 'lease.extend_failed', err: String(e) }, 'could not extend the lease');
      return false;
    }
  }

  /**
   * Extends every lockMs/3. Each extendLock may take up to 2/3 of the lease to answer (the next waits for
   * it): on a saturated machine an answer after lockMs/3 still confirms the lease from its send time, and
   * the soak measured most extends timing out at lockMs/3 with load 19 on two cores — each one dropping a
   * task for nothing once the local deadline judged by them.
   */
  start(): void {
    const every = Math.max(Math.floor(this.lockMs / 3), 100);
    const tick = async () => {
      await this.extend(Math.max(Math.floor((this.lockMs * 2) / 3), 100));
      if (this.timer) this.timer = setTimeout(tick, every);
    };
    this.timer = setTimeout(tick, every);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.parent.removeEventListener('abort', this.onParentAbort);
  }
}
