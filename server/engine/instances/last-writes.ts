/**
 * History rows and notices a command leaves for one last statement (the completion's writeTail, the
 * start's writeLast): one insert ordered by `ord` (the chain trigger links them so) that also notifies.
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
   * Statements sent on the transaction, unawaited (the start's inserts): awaited with the last statement,
   * so the rows go out together, in order.
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

/** Writes `last` in one statement, awaited with the statements already sent (the first error is thrown). */
export async function writeLast(tx: Tx, last: LastWrites): Promise<void> {
  const sent = last.sent ?? [];
  if (last.history.length === 0 && last.notices.length === 0) await pipelined(...sent);
  else await pipelined(...sent, execute(tx, LAST_WRITES, lastWritesValues(last)));
}
