/** The history statements of the hot paths; the chain trigger links the rows they append in order. */
import { statement } from '../pg.js';
import { historyFromJson, historyInsert } from '../rows.js';

/** The channel every engine process listens on (LISTEN/NOTIFY). */
export const EVENTS_CHANNEL = 'abada_events';

/** $1 the history records in order. */
export const HISTORY_APPEND = statement('history_append', historyInsert(historyFromJson('$1::jsonb')));

/** $1 the history records in order, $2 the notices (JSON texts); `more` adds CTEs (parameters from $3). */
const pending = (more = '') => `WITH h AS (${historyInsert(historyFromJson('$1::jsonb'))})${more}
  SELECT pg_notify('${EVENTS_CHANNEL}', n) FROM jsonb_array_elements_text($2::jsonb) n`;

/** What a command left pending: its history rows and its notices. */
export const LAST_WRITES = statement('history_last_writes', pending());

/**
 * The completion's last statement: its history rows and notices, its stored report ($3 task, $4
 * attempt, $5 the request's SHA-256, $6 the outcome), and the worker's success ($7 principal, $8 worker
 * id: its count of consecutive failures back to 0 where it is not, so no row is written otherwise).
 */
export const COMPLETION_TAIL = statement(
  'history_completion_tail',
  pending(`,
  r AS (INSERT INTO task_reports (task_id, attempt, operation, request_sha256, outcome)
        VALUES ($3, $4, 'complete', $5, $6)),
  w AS (UPDATE workers SET consecutive_failures = 0
         WHERE principal_id = $7 AND worker_id = $8 AND consecutive_failures <> 0)`),
);
