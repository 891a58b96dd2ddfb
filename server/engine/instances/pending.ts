/**
 * History rows and notices a command leaves for one last statement instead of writing each at once: the
 * completion (tasks/completion.ts, whose writeTail also stores its report) and the start of an instance
 * (writePending here). Rows keep their order (one insert, ordered by `ord`; the chain trigger links
 * them in that order) and the notices are sent by the same statement, so a command's history and
 * notices cost one round trip to PostgreSQL instead of one per row and per notice.
 */
import {
  EVENTS_CHANNEL,
  type EngineEvent,
  pgClientOf,
  type StreamPayload,
  type Tx,
} from '../common/index.js';
import { historyFromJson, historyInsert, historyRecords } from '../../db/rows.js';
import type { HistoryEntry } from '../history/index.js';

export interface PendingWrites {
  history: HistoryEntry[];
  notices: Exclude<EngineEvent, StreamPayload>[];
}

/**
 * The statement that writes what a command left pending: $1 the history records in order, $2 the
 * notices (JSON texts). `more` adds a command's own CTEs to the same statement (parameters from $3;
 * the completion's report and worker row). Every CTE runs whether or not a notice does.
 */
export function pendingStatement(more = ''): string {
  return `WITH h AS (${historyInsert(historyFromJson('$1'))})${more}
  SELECT pg_notify('${EVENTS_CHANNEL}', n) FROM jsonb_array_elements_text($2) n`;
}

/** $1 and $2 of pendingStatement. */
export function pendingValues(pending: PendingWrites): [string, string] {
  return [
    JSON.stringify(historyRecords(pending.history)),
    JSON.stringify(pending.notices.map((n) => JSON.stringify(n))),
  ];
}

const PENDING = pendingStatement();

/** Writes what a command left pending, in one prepared statement on the command's transaction. */
export async function writePending(tx: Tx, pending: PendingWrites): Promise<void> {
  if (pending.history.length === 0 && pending.notices.length === 0) return;
  await pgClientOf(tx).query({ name: 'abada_pending_writes', text: PENDING, values: pendingValues(pending) });
}
