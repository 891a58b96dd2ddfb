/** Polls `fn` every 50 ms until it returns something truthy; fails with `what` after `ms`. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  ms = 20_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts a long-polling fetch and resolves once it is parked, waiting for work: a waiting fetchAndLock
 * listens for task events on the engine's notifier, so one more 'event' listener there means it waits.
 * A test of the wake-up is then sure the work arrives while the poll waits, not before it looked.
 */
export async function parkedPoll<T>(
  notifier: { listenerCount(event: string): number } | null,
  fetch: () => Promise<T>,
): Promise<{ result: Promise<T> }> {
  if (!notifier) throw new Error('parkedPoll needs the engine in this process (its notifier)');
  const before = notifier.listenerCount('event');
  let returned = false;
  const result = fetch().finally(() => {
    returned = true;
  });
  await waitFor('the long poll to park', () => {
    if (returned) throw new Error('the fetch returned before it parked: there was work already');
    return notifier.listenerCount('event') > before;
  });
  return { result };
}
