/**
 * History rows and notices a command leaves for one last statement instead of writing each at once: the
 * completion (tasks/completion.ts, whose writeTail also stores its report) and the start of an instance
 * (writePending here). Rows keep their order (one insert, ordered by `ord`; the chain trigger links
 * them in that order) and the notices are sent by the same statement, so a command's history and
 * notices cost one round trip to PostgreSQL instead of one per row and per notice.
 */
import { execute } from '../../db/pg.js';
import { historyRecords } from '../../db/rows.js';
import { PENDING_WRITES } from '../../db/statements/history.js';
import type { EngineEvent, StreamPayload, Tx } from '../common/index.js';
import type { HistoryEntry } from '../history/index.js';

export interface PendingWrites {
  history: HistoryEntry[];
  notices: Exclude<EngineEvent, StreamPayload>[];
}

/** The first two values of PENDING_WRITES (and of the completion's last statement). */
export function pendingValues(pending: PendingWrites): [string, string] {
  return [
    JSON.stringify(historyRecords(pending.history)),
    JSON.stringify(pending.notices.map((n) => JSON.stringify(n))),
  ];
}

/** Writes what a command left pending, in one statement on the command's transaction. */
export async function writePending(tx: Tx, pending: PendingWrites): Promise<void> {
  if (pending.history.length === 0 && pending.notices.length === 0) return;
  await execute(tx, PENDING_WRITES, pendingValues(pending));
}
