/**
 * The engine's round trips to PostgreSQL, observed through its pool: a round trip is what a connection
 * sends before any answer comes back (pipelined statements travel together). Each statement is named by
 * its prepared name, or by its text.
 */
import type pg from 'pg';
import { connectionOf } from '../../server/db/pg.js';
import type { TestEngine } from './engine.js';

export interface RoundTrips {
  /** per connection acquired while watching: its round trips, each the statements it sent */
  connections(): string[][][];
  stop(): void;
}

export function watchRoundTrips(engine: TestEngine): RoundTrips {
  const pool = connectionOf(engine.context.db) as pg.Pool;
  const trips = new Map<object, string[][]>();
  const watch = (client: pg.PoolClient) => {
    if (trips.has(client)) return;
    const mine: string[][] = [];
    trips.set(client, mine);
    let answered = true;
    const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const q = args[0] as string | { name?: string; text?: string };
      const label = typeof q === 'string' ? q : (q.name ?? q.text ?? '');
      if (answered || mine.length === 0) mine.push([]);
      answered = false;
      mine[mine.length - 1].push(label);
      // the pool itself queries with a callback; the engine, with a promise
      const last = args.at(-1);
      if (typeof last === 'function')
        args[args.length - 1] = (...a: unknown[]) => {
          answered = true;
          return last(...a);
        };
      const p = query(...args);
      p?.then(
        () => (answered = true),
        () => (answered = true),
      );
      return p;
    };
  };
  pool.on('acquire', watch);
  return { connections: () => [...trips.values()], stop: () => pool.off('acquire', watch) };
}
