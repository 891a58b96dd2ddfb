import type { EngineContext } from './context.js';
import type { EngineEvent } from './event.js';

/**
 * Runs `work` when an event `wakes` it (NOTIFY) and every `intervalMs` (retries, missed events). Runs never
 * overlap in one process; a wake-up during a run schedules exactly one more run after it. A failed run
 * goes to `onError` (server/app.ts logs and counts it) and the next one tries again. Returns stop().
 */
export function startBackgroundRunner(
  ctx: EngineContext,
  work: () => Promise<unknown>,
  opts: {
    intervalMs: number;
    wakes?: (e: EngineEvent) => boolean;
    runAtStart?: boolean;
    onError: (e: unknown) => void;
  },
): () => void {
  let running = false;
  let again = false;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    work()
      .catch(opts.onError)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          tick();
        }
      });
  };
  const onEvent = (e: EngineEvent) => {
    if (opts.wakes?.(e)) tick();
  };
  if (opts.wakes) ctx.notifier?.on('event', onEvent);
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();
  if (opts.runAtStart) tick();
  return () => {
    stopped = true;
    clearInterval(timer);
    ctx.notifier?.off('event', onEvent);
  };
}
