/**
 * Subscriptions are fed by PostgreSQL NOTIFY (the engine's events/), so a subscriber on one engine process
 * sees events committed by another. An event names ids only; the object is loaded once per process and
 * shared by every subscriber that may see it. Approval and incident events come from the durable stream,
 * with their positions, to `onStream` listeners (stream.ts); task events go through the pubsub.
 */
import { createPubSub } from 'graphql-yoga';
import type { EngineEvent, StreamEvent } from '../engine/common/index.js';
import type { Notifier } from '../engine/events/index.js';

export class EventHub {
  readonly pubsub = createPubSub<{ task: [Extract<EngineEvent, { type: 'task' }>] }>();
  private readonly streamListeners = new Set<(e: StreamEvent) => void>();

  constructor(notifier: Notifier | null) {
    notifier?.on('event', (e: EngineEvent) => {
      if (e.type === 'task') this.pubsub.publish('task', e);
      else if (e.type === 'approval' || e.type === 'incident')
        for (const listen of this.streamListeners) listen(e as StreamEvent);
    });
  }

  /** Hears every stream event of this process, in position order, from now on. Returns off(). */
  onStream(listen: (e: StreamEvent) => void): () => void {
    this.streamListeners.add(listen);
    return () => this.streamListeners.delete(listen);
  }

  private readonly perEvent = new WeakMap<object, Promise<unknown>>();

  /**
   * Loads what an event is about once for all subscribers of this process: `event` is the delivered
   * object, the same for every subscriber, so two quick changes of the same approval are two loads.
   */
  share<T>(event: object, load: () => Promise<T>): Promise<T> {
    let value = this.perEvent.get(event) as Promise<T> | undefined;
    if (!value) {
      value = load();
      this.perEvent.set(event, value);
    }
    return value;
  }
}

/**
 * A subscriber's stream: each event of `source` passed through `select` (null skips it), in one stage
 * (a Repeater per filter/map stage was most of an event's fan-out at 1,000 subscribers). `return()` ends
 * the source at once, even while waiting for an event.
 */
export function selectEvents<E, R>(
  source: AsyncIterator<E>,
  select: (event: E) => R | null | Promise<R | null>,
): AsyncIterableIterator<R> {
  const done = (): IteratorResult<R> => ({ done: true, value: undefined });
  const it: AsyncIterableIterator<R> = {
    async next() {
      for (;;) {
        const r = await source.next();
        if (r.done) return done();
        const value = await select(r.value);
        if (value !== null) return { done: false, value };
      }
    },
    async return() {
      await source.return?.();
      return done();
    },
    async throw(e?: unknown) {
      await source.return?.();
      throw e;
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it;
}
