/**
 * One subscriber's view of the event stream (SPEC §13): with `after`, the events committed after that cursor
 * read from the database in pages, then the live events of this process; without it, live only. The live
 * listener is attached before the first read, and every event at or below the replay's last position is
 * skipped, so the switch to live has no gap and no duplicate. A subscriber more than LIVE_BUFFER events
 * behind drops its buffer and reads the rest from the database (being slow costs a read, not an event).
 */
import type { StreamEvent } from '../engine/common/index.js';
import { cursorOf, positionOf, readStream, type StreamFilter } from '../engine/events/index.js';
import type { GraphQLContext } from './builder.js';

const PAGE = 200;
const LIVE_BUFFER = 1000;

/** An object as a subscription delivers it: with the position of the event being delivered. */
export type Positioned<T> = T & { eventPosition?: number };

/** Its `eventCursor`: the position of the event being delivered, else of the latest event about it. */
export async function eventCursorOf(o: Positioned<{ id: string }>, ctx: GraphQLContext): Promise<string> {
  return cursorOf(o.eventPosition ?? (await ctx.loaders.eventPosition.load(o.id)));
}

function matches(e: StreamEvent, f: StreamFilter): boolean {
  if (e.type !== f.type) return false;
  if (f.projectId !== null && e.projectId !== f.projectId) return false;
  if (f.opened === null || e.type !== 'approval') return true;
  return (e.change === 'opened') === f.opened;
}

/** The subscriber's events; an unknown or pruned cursor rejects here (VALIDATION_FAILED), not later. */
export async function streamFrom(
  ctx: GraphQLContext,
  of: Omit<StreamFilter, 'projectId'>,
  after: string | null | undefined,
): Promise<AsyncIterator<StreamEvent>> {
  const filter: StreamFilter = { ...of, projectId: ctx.actor!.projectId };
  const live: StreamEvent[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  /** every event at or below this position was delivered or is not the subscriber's; null: none yet */
  let through: number | null = null;
  let replay: StreamEvent[] = [];
  let needsRead = false;
  const off = ctx.hub.onStream((e) => {
    if (!matches(e, filter)) return;
    live.push(e);
    if (live.length > LIVE_BUFFER) {
      through ??= live[0].position - 1;
      live.length = 0;
      needsRead = true;
    }
    wake?.();
  });
  const read = async (from: number) => {
    const page = await readStream(ctx.engine, from, filter, PAGE);
    replay = page.events;
    through = page.through;
    needsRead = page.events.length === PAGE;
  };
  if (after != null) {
    try {
      await read(positionOf(after));
    } catch (e) {
      off();
      throw e;
    }
  }
  const done = (): IteratorResult<StreamEvent> => ({ done: true, value: undefined });
  return {
    async next() {
      for (;;) {
        if (ended) return done();
        const r = replay.shift();
        if (r) return { done: false, value: r };
        if (needsRead && through !== null) {
          await read(through);
          continue;
        }
        const e = live.shift();
        if (e) {
          if (through !== null && e.position <= through) continue;
          through = e.position;
          return { done: false, value: e };
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
      }
    },
    async return() {
      ended = true;
      off();
      wake?.();
      return done();
    },
  };
}
