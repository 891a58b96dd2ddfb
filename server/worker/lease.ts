/**
 * Keeps a task's lease alive while the worker works on it: `extendLock` every lockMs/3. When the engine
 * says the lease is gone (LEASE_NOT_HELD, WORK_RETIRED, ATTEMPT_MISMATCH) the keeper aborts the run, so
 * the worker stops at once instead of acting on work someone else now owns. An unreachable engine is
 * retried on the next tick: the lease may still be live when it comes back.
 */
import type { Logger } from 'pino';
import { DROP_CODES, type EngineClient, GraphQLRequestError } from './graphql.js';

export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private readonly controller = new AbortController();
  /** Why the run was aborted (lease lost, worker stopping), once it was. */
  reason: string | null = null;
  private readonly onParentAbort = () => this.abort('the worker is stopping');

  constructor(
    private readonly client: EngineClient,
    private readonly task: { id: string; attempt: number },
    private readonly workerId: string,
    private readonly lockMs: number,
    private readonly log: Logger,
    private readonly parent?: AbortSignal,
  ) {
    if (parent?.aborted) this.abort('the worker is stopping');
    else parent?.addEventListener('abort', this.onParentAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.reason = reason;
    this.controller.abort(new Error(reason));
    this.stop();
  }

  start(): void {
    const every = Math.max(Math.floor(this.lockMs / 3), 100);
    const tick = async () => {
      try {
        await this.client.extendLock(
          {
            taskId: this.task.id,
            workerId: this.workerId,
            attempt: this.task.attempt,
            lockDurationMs: this.lockMs,
          },
          { timeoutMs: every, signal: this.signal },
        );
      } catch (e) {
        if (e instanceof GraphQLRequestError && DROP_CODES.has(e.code)) {
          this.log.warn({ event: 'lease.lost', code: e.code }, 'the lease is gone; dropping the task');
          this.abort(`lease lost: ${e.code}`);
          return;
        }
        if (!this.signal.aborted)
          this.log.warn({ event: 'lease.extend_failed', err: String(e) }, 'could not extend the lease');
      }
      if (this.timer) this.timer = setTimeout(tick, every);
    };
    this.timer = setTimeout(tick, every);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }
}
