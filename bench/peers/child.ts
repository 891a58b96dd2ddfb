/**
 * The side of a peer's child process that the bench drives (bench/sections/peers.ts), over the IPC
 * channel. After its set-up and a first warm-up in each of its modes (`PEER_MODES`, `PEER_WARM_TASKS`:
 * the peers start side by side, so their first and slowest runs overlap) the child says `ready`. For
 * each window the bench names a mode; the child runs a warm-up, flushes its connections' statistics and
 * says `warmed`; on `go` it runs the timed window — IN_FLIGHT loops, each starting its next task when
 * the last one ends, none started after the deadline — flushes again and says `done` with the tasks it
 * finished. So no task is in flight at either end of a window, and every commit and row counted in it
 * belongs to a task it counted.
 */
import type pg from 'pg';
import { flushStats } from '../pgstat.js';

/** From the bench to the child. */
export type ToChild =
  | { kind: 'window'; mode: string; seconds: number; warmTasks: number }
  | { kind: 'go' }
  | { kind: 'exit' };

/** From the child to the bench. */
export type FromChild =
  | { kind: 'ready' }
  | { kind: 'warmed' }
  | { kind: 'done'; tasks: number; seconds: number; flushed: number }
  | { kind: 'error'; message: string };

/** Tasks in flight in each peer, and the connections of its pool: as Abada's headline runs its 16. */
export const IN_FLIGHT = 16;
export const POOL_SIZE = 16;

export interface Peer {
  /** the pool every statement of the peer goes through (flushed at each end of a window) */
  pool: pg.Pool;
  /** runs one agent task to its end; `n` is unique in the process */
  task(n: number, mode: string): Promise<void>;
  close(): Promise<void>;
}

/** The peer's database, from the bench. */
export function peerDatabaseUrl(): string {
  const url = process.env.PEER_DATABASE_URL;
  if (!url) throw new Error('PEER_DATABASE_URL is not set: bench/peers/*-proc.ts are started by the bench');
  return url;
}

/** Serves the bench's windows until it says `exit`. */
export async function servePeer(peer: Peer): Promise<void> {
  const send = (m: FromChild) => process.send?.(m);
  let next = 0;
  const loops = async (until: () => boolean, mode: string) => {
    let tasks = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (until()) {
          await peer.task(next++, mode);
          tasks++;
        }
      }),
    );
    return tasks;
  };
  let go: () => void = () => {};
  let current: Promise<void> = Promise.resolve();
  const window = async (m: Extract<ToChild, { kind: 'window' }>) => {
    let warmed = 0;
    await loops(() => warmed++ < m.warmTasks, m.mode);
    await flushStats(peer.pool);
    const started = new Promise<void>((r) => {
      go = r;
    });
    send({ kind: 'warmed' });
    await started;
    const t0 = performance.now();
    const deadline = Date.now() + m.seconds * 1000;
    const tasks = await loops(() => Date.now() < deadline, m.mode);
    const seconds = (performance.now() - t0) / 1000;
    send({ kind: 'done', tasks, seconds, flushed: await flushStats(peer.pool) });
  };
  const fail = (e: unknown) => {
    send({ kind: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    process.exit(1);
  };
  process.on('message', (m: ToChild) => {
    if (m.kind === 'window') current = window(m).catch(fail);
    else if (m.kind === 'go') go();
    else
      current
        .then(() => peer.close())
        .then(() => process.exit(0))
        .catch(fail);
  });
  for (const mode of process.env.PEER_MODES?.split(',') ?? []) {
    let warmed = 0;
    await loops(() => warmed++ < Number(process.env.PEER_WARM_TASKS ?? 0), mode);
  }
  send({ kind: 'ready' });
}
