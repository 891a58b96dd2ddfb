/**
 * History rows and notices a command leaves for one last statement (the completion's writeTail, the
 * start's writeLast) instead of writing each at once: one insert ordered by `ord` (the chain trigger links
 * them in that order) that also sends the notices, so they cost one round trip instead of one each.
 */
import { execute, pipelined } from '../../db/pg.js';
import { historyRecords } from '../../db/rows.js';
import { LAST_WRITES } from '../../db/statements/history.js';
import type { EngineEvent, StreamPayload, Tx } from '../common/index.js';
import type { HistoryEntry } from '../history/index.js';

export interface LastWrites {
  history: HistoryEntry[];
  notices: Exclude<EngineEvent, StreamPayload>[];
  /**
   * Statements already sent on the transaction and not awaited (the start's inserts): their answers are
   * awaited with the last statement, so the rows go out together, in the order they were issued.
   */
  sent?: Promise<unknown>[];
}

/** The first two values of LAST_WRITES (and of the completion's last statement). */
export function lastWritesValues(last: LastWrites): [string, string] {
  return [
    JSON.stringify(historyRecords(last.history)),
    JSON.stringify(last.notices.map((n) => JSON.stringify(n))),
  ];
}

/**
 * Writes what a command left for its last statement, in one statement on its transaction, and awaits it
 * with the statements already sent (the first error is the one thrown).
 */
export async function writeLast(tx: Tx, last: LastWrites): Promise<void> {
  const sent = last.sent ?? [];
  if (last.history.length === 0 && last.notices.length === 0) await pipelined(...sent);
  else await pipelined(...sent, execute(tx, LAST_WRITES, lastWritesValues(last)));
}
