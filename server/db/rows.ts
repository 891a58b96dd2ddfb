/**
 * The two rows the engine writes with hand-written SQL on its hot paths — a journal step and a history
 * row — each with ONE column list and one mapping each way; every statement writing them builds on it.
 */
import { getTableColumns } from 'drizzle-orm';
import { history, type StepRow, steps } from './schema.js';

/** The steps table as the journal writes it, all but its timestamps: [column, SQL type, StepRow field]. */
const STEP_FIELDS = Object.entries(getTableColumns(steps))
  .filter(([field]) => field !== 'createdAt' && field !== 'updatedAt')
  .map(([field, column]) => [column.name, column.getSQLType(), field as keyof StepRow] as const);

/** What a later journal call may change on a step (its identity and request never change). */
const STEP_CHANGING = [
  'state',
  'response_enc',
  'error_enc',
  'idempotency_key',
  'usage',
  'cost_usd',
  'approval_id',
  'reconciled',
  'comment',
];

const stepColumns = STEP_FIELDS.map((f) => f[0]).join(', ');

/** Upserts the steps in the JSON array `source` (`stepRecord`s): a new one inserted, others updated. */
export function stepUpsert(source: string): string {
  return `INSERT INTO steps (${stepColumns})
    SELECT ${stepColumns} FROM jsonb_to_recordset(${source})
      AS x(${STEP_FIELDS.map(([c, t]) => `${c} ${t}`).join(', ')})
    ON CONFLICT (task_id, attempt, sequence) DO UPDATE SET
      ${STEP_CHANGING.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()`;
}

/** A step row as a record of `stepUpsert`'s source. */
export function stepRecord(row: StepRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, , field] of STEP_FIELDS) out[column] = row[field];
  return out;
}

/** A `steps` row as PostgreSQL returns it from `to_jsonb(s)` (snake_case, JSON) in the drizzle row shape. */
export function stepFromRecord(r: Record<string, unknown>): StepRow {
  const row: Record<string, unknown> = {};
  for (const [column, type, field] of STEP_FIELDS) {
    const v = r[column] ?? null;
    row[field] = type === 'boolean' ? Boolean(v) : type === 'double precision' && v !== null ? Number(v) : v;
  }
  row.createdAt = new Date(r.created_at as string);
  row.updatedAt = new Date(r.updated_at as string);
  return row as StepRow;
}

/** One row of the append-only history before the chain trigger gives it its place (SPEC §8). */
export interface HistoryEntry {
  projectId: string;
  processInstanceId: string;
  eventType: string;
  /** a principal name and id (`human:alice#uuid`), `engine`, or `worker:<id>` */
  actor: string;
  taskId?: string | null;
  attempt?: number | null;
  sequence?: number | null;
  approvalId?: string | null;
  incidentId?: string | null;
  /** digests, states, reasons — never prompts, payloads or secrets */
  data?: Record<string, unknown>;
}

/** The history table as the engine writes it, all but what the chain trigger fills: [column, SQL type, field]. */
const HISTORY_FIELDS = Object.entries(getTableColumns(history))
  .filter(([field]) => !['id', 'seq', 'at', 'hash', 'events', 'prevHash'].includes(field))
  .map(([field, column]) => [column.name, column.getSQLType(), field as keyof HistoryEntry] as const);

/** The columns an insert gives: the event's, then `events` (the later events of the row's commit). */
const historyColumns = `${HISTORY_FIELDS.map((f) => f[0]).join(', ')}, events`;

/**
 * The one INSERT into history, around a query yielding the history columns by name (`events` included)
 * plus `ord`, the order in which the rows join the chain (the chain trigger fills seq, prev_hash, hash).
 */
export function historyInsert(rows: string): string {
  return `INSERT INTO history (${historyColumns}, seq, prev_hash, hash)
    SELECT ${historyColumns}, 0, '', '' FROM (${rows}) AS h ORDER BY h.ord`;
}

/** `historyInsert`'s rows from the JSON array `source` of records made by `historyRecords`. */
export function historyFromJson(source: string): string {
  return `SELECT * FROM jsonb_to_recordset(${source})
    AS y(ord int, ${HISTORY_FIELDS.map(([c, t]) => `${c} ${t}`).join(', ')}, events jsonb)`;
}

/** An event's fields in a row's `events`: all but the row's instance and the data (added if not empty). */
const EVENT_FIELDS = HISTORY_FIELDS.map((f) => f[2]).filter(
  (f) => f !== 'projectId' && f !== 'processInstanceId' && f !== 'data',
);

/**
 * History entries as the records of `historyFromJson`: one row per instance (SPEC §8: a row may carry
 * one commit's events for one instance), its first entry in the row's columns and the others, in order,
 * in `events` (null fields and empty data left out). Every entry of one statement is one commit's.
 */
export function historyRecords(entries: readonly HistoryEntry[]): Record<string, unknown>[] {
  const rows = new Map<string, { row: Record<string, unknown>; later: Record<string, unknown>[] }>();
  for (const e of entries) {
    const held = rows.get(e.processInstanceId);
    if (!held) {
      const row: Record<string, unknown> = { ord: rows.size };
      for (const [column, , field] of HISTORY_FIELDS) row[column] = e[field] ?? null;
      row.data = e.data ?? {};
      rows.set(e.processInstanceId, { row, later: [] });
      continue;
    }
    const event: Record<string, unknown> = {};
    for (const f of EVENT_FIELDS) if (e[f] != null) event[f] = e[f];
    if (e.data && Object.keys(e.data).length > 0) event.data = e.data;
    held.later.push(event);
  }
  return [...rows.values()].map(({ row, later }) => ({ ...row, events: later.length ? later : null }));
}
