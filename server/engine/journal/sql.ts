/**
 * How a journal transaction talks to PostgreSQL: `BEGIN` with the load, and the write with what follows
 * it (a caller's statement, `COMMIT`), each pipelined into one round trip.
 */
import { type Db, execute, pipelined, type Statement, connectionOf } from '../../db/pg.js';
import { JOURNAL_LOAD, JOURNAL_LOAD_MANY, JOURNAL_WRITE } from '../../db/statements/journal.js';
import { LOCK_TASKS } from '../../db/statements/tasks.js';
import type { Effect } from './state.js';

/** One call of a journal transaction: its task, attempt, the sequences it touches and whether a model call starts. */
export interface LoadKey {
  taskId: string;
  attempt: number;
  sequences: number[];
  withUsage: boolean;
}

/** A named statement with its values, run after another in the same round trip. */
export interface Then<Row = unknown> {
  statement: Statement<Row>;
  values: readonly unknown[];
}

/** `BEGIN`, the lock and the load in one round trip; the task's row, or undefined when there is none. */
export async function beginAndLoad(db: Db, key: LoadKey): Promise<Record<string, unknown> | undefined> {
  const [, , rows] = await pipelined(
    connectionOf(db).query('BEGIN'),
    execute(db, LOCK_TASKS, [[key.taskId]]),
    execute(db, JOURNAL_LOAD, [key.taskId, key.attempt, key.sequences, key.withUsage]),
  );
  return rows[0];
}

/** `BEGIN`, the locks and the load of a group of calls in one round trip: each found task's row by index. */
export async function beginAndLoadMany(db: Db, keys: LoadKey[]) {
  const json = JSON.stringify(
    keys.map((k, i) => ({ i, id: k.taskId, attempt: k.attempt, seqs: k.sequences, withUsage: k.withUsage })),
  );
  const [, , rows] = await pipelined(
    connectionOf(db).query('BEGIN'),
    execute(db, LOCK_TASKS, [keys.map((k) => k.taskId)]),
    execute(db, JOURNAL_LOAD_MANY, [json]),
  );
  return new Map(rows.map(({ groupIndex, ...row }) => [groupIndex, row]));
}

/** Writes the changes (if any), then `after` (its rows returned), then COMMIT when asked: one round trip. */
export async function write(
  db: Db,
  changes: { steps: unknown[]; history: unknown[] },
  commit: boolean,
  after?: Then,
): Promise<Record<string, unknown>[] | undefined> {
  const wrote =
    changes.steps.length > 0 || changes.history.length > 0
      ? execute(db, JOURNAL_WRITE, [JSON.stringify(changes.steps), JSON.stringify(changes.history)])
      : Promise.resolve([]);
  const then = after ? execute(db, after.statement, after.values) : Promise.resolve(undefined);
  const committed = commit ? connectionOf(db).query('COMMIT') : Promise.resolve(undefined);
  const [, rows] = await pipelined(wrote, then, committed);
  return rows as Record<string, unknown>[] | undefined;
}

/** Writes the changes and COMMITs in one round trip; effects run after the write, before COMMIT. */
export async function writeAndCommit(
  db: Db,
  changes: { steps: unknown[]; history: unknown[] },
  effects: Effect[],
): Promise<void> {
  await write(db, changes, effects.length === 0);
  if (effects.length === 0) return;
  for (const effect of effects) await effect(db);
  await connectionOf(db).query('COMMIT');
}
