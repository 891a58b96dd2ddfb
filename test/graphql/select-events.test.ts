/**
 * selectEvents, the one-stage subscriber stream behind every subscription: it filters and maps in
 * order, and a client that leaves while no event is coming ends the source at once (no listener left
 * behind on the process's pubsub).
 */
import { createPubSub } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { selectEvents } from '../../server/graphql/pubsub.js';

describe('selectEvents', () => {
  it('skips what select answers null for, maps the rest, in order', async () => {
    const pubsub = createPubSub<{ n: [number] }>();
    const it = selectEvents(pubsub.subscribe('n'), async (n) => (n % 2 ? null : n * 10));
    const first = it.next();
    const second = first.then(() => it.next());
    for (const n of [1, 2, 3, 4]) pubsub.publish('n', n);
    expect(await first).toEqual({ done: false, value: 20 });
    expect(await second).toEqual({ done: false, value: 40 });
    await it.return?.();
  });

  it('ends a pending wait at once when the subscriber leaves, and receives nothing after', async () => {
    const pubsub = createPubSub<{ n: [number] }>();
    const source = pubsub.subscribe('n');
    let sourceEnded = false;
    const watched = {
      next: () => source.next(),
      return: async () => {
        sourceEnded = true;
        return source.return();
      },
      [Symbol.asyncIterator]() {
        return watched;
      },
    };
    let selected = 0;
    const it = selectEvents(watched as typeof source, (n) => {
      selected++;
      return n;
    });
    const pending = it.next();
    await it.return?.();
    // Nothing is ever published before this: the pending wait resolving at all is the proof that leaving
    // ended it (else it would hang until the test's timeout).
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(sourceEnded).toBe(true);
    pubsub.publish('n', 1);
    // select runs only inside next(): an ended stream answers done and never looks at the event.
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(selected).toBe(0);
  });
});
