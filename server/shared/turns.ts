/**
 * Work that goes out together when it arrives together (the engine's group commit, the worker's journal
 * batches). At most `inFlight` turns run at once, each taking what waits and fits (`maxTurn` items, one
 * per key, each able to `join` the first): nothing waits while the work is light, turns grow with load.
 *
 * A turn still running after `stalledMs` (a row lock, a slow engine) lets one more turn start, up to
 * `maxInFlight`, so one stuck turn never holds up everything behind it.
 */
export interface TurnOptions<T> {
  inFlight: number;
  stalledMs: number;
  maxInFlight: number;
  maxTurn: number;
  /** items with the same key never share a turn (one task's calls go one after another) */
  key(item: T): string;
  /** whether `item` may join a turn whose first item is `first` (default: any) */
  joins?(first: T, item: T): boolean;
  /** runs one turn; the next may start when it settles */
  run(turn: T[]): Promise<void>;
  /** take the next turn on the next turn of the event loop, so items queued in the same tick go together */
  defer?: boolean;
}

export class Turns<T> {
  private queue: T[] = [];
  private running = 0;
  private stalled = 0;
  private scheduled = false;

  constructor(private readonly o: TurnOptions<T>) {}

  /** Queues the items (all before a turn is taken) and starts a turn if one may start. */
  push(...items: T[]): void {
    this.queue.push(...items);
    this.kick();
  }

  /** Takes an item back that has not gone out yet (its caller gave up). */
  remove(item: T): void {
    this.queue = this.queue.filter((x) => x !== item);
  }

  private kick(): void {
    if (!this.o.defer) {
      this.pump();
      return;
    }
    if (this.scheduled || this.queue.length === 0 || this.running >= this.limit()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private limit(): number {
    return Math.min(this.o.inFlight + this.stalled, this.o.maxInFlight);
  }

  private pump(): void {
    while (this.running < this.limit() && this.queue.length > 0) {
      const first = this.queue[0];
      const turn: T[] = [];
      const rest: T[] = [];
      const keys = new Set<string>();
      for (const item of this.queue) {
        const key = this.o.key(item);
        if (turn.length < this.o.maxTurn && !keys.has(key) && (this.o.joins?.(first, item) ?? true)) {
          turn.push(item);
          keys.add(key);
        } else rest.push(item);
      }
      this.queue = rest;
      this.running++;
      let stalled = false;
      const timer = setTimeout(() => {
        stalled = true;
        this.stalled++;
        this.kick();
      }, this.o.stalledMs);
      void this.o.run(turn).finally(() => {
        clearTimeout(timer);
        if (stalled) this.stalled--;
        this.running--;
        this.kick();
      });
    }
  }
}
