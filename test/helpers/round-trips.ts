/**
 * Round trips to PostgreSQL, counted on the wire as the engine's pool sends them, whatever SQL they carry.
 * Every round trip of a query — simple or extended, one statement or several in one text — ends with the
 * server's ReadyForQuery message, which also tells whether a transaction is open ('T', or 'E' after an
 * error) or not ('I'). So a transaction's round trips are the ReadyForQuery messages on its connection
 * from the first that says 'T' to the next that says 'I', the one answering COMMIT (or ROLLBACK).
 */
import type pg from 'pg';
import type { Db } from '../../server/db/client.js';

export interface TransactionWatch {
  /** The round trips of each transaction that ended since the watch began, in the order they ended. */
  readonly transactions: number[];
  stop(): void;
}

/** The pg pool under the engine's drizzle database (drizzle's `$client`). */
export function poolOf(db: Db): pg.Pool {
  return (db as Db & { $client: pg.Pool }).$client;
}

/**
 * Watches every connection the pool hands out from now on and records each transaction that ends on one
 * of them. A connection already checked out when the watch begins is seen from its next checkout.
 */
export function watchTransactions(pool: pg.Pool): TransactionWatch {
  const transactions: number[] = [];
  const open = new Map<pg.PoolClient, number>();
  const heard = new WeakSet<pg.PoolClient>();
  let stopped = false;
  const onAcquire = (client: pg.PoolClient) => {
    if (heard.has(client)) return;
    heard.add(client);
    // `connection` is pg.Client's own protocol stream (typed by @types/pg); pg listens to it the same way
    (client as unknown as pg.Client).connection.on('readyForQuery', (msg: { status: string }) => {
      if (stopped) return;
      if (msg.status === 'I') {
        const trips = open.get(client);
        if (trips !== undefined) transactions.push(trips + 1);
        open.delete(client);
      } else open.set(client, (open.get(client) ?? 0) + 1);
    });
  };
  pool.on('acquire', onAcquire);
  return {
    transactions,
    stop() {
      stopped = true;
      pool.off('acquire', onAcquire);
    },
  };
}
