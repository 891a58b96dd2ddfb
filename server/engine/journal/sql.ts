/**
 * The journal's two statements: the load (lock the task, read the steps a call touches, the last step
 * and the usage so far) and the write (every changed step and its history rows, in one statement). They
 * run as SQL-level prepared statements (`PREPARE … / EXECUTE …`): prepared once per connection they keep
 * their plans, and being plain SQL they travel in simple-protocol queries together with BEGIN and COMMIT —
 * two round trips per journal call (`BEGIN; EXECUTE load` and `EXECUTE write; COMMIT`). Measured on 2
 * cores: planning the load had cost more than running it (0.3 vs 0.12 ms), hence generic plans (the pool
 * sets plan_cache_mode, see db/client.ts).
 */
import type pg from 'pg';
import { historyFromJson, historyInsert, stepUpsert } from '../../db/rows.js';
import { sqlText } from '../common/index.js';
import { LOCKED_TASK_COLUMNS } from '../lease/index.js';

const LOCKED_COLUMNS = sqlText(LOCKED_TASK_COLUMNS);

/**
 * Whether the agent node has a limit (as `hasLimits` in limits.ts): only then is the usage so far
 * summed (a sum over every model call of the task).
 */
const HAS_LIMITS = `coalesce(jsonb_strip_nulls(t.agent_work->'limits') ?| array['maxTurns', 'maxTokensTotal', 'budgetUsd'], false)`;

/**
 * The load's columns for one task `t`: `attempt`, `seqs` and `withUsage` are the SQL expressions of the
 * call's attempt, its sequences and whether a model call starts (then limits are checked).
 */
const loadColumns = (attempt: string, seqs: string, withUsage: string) => `${LOCKED_COLUMNS},
    (SELECT jsonb_agg(to_jsonb(s)) FROM steps s WHERE s.task_id = t.id AND s.attempt = ${attempt}
       AND s.sequence = ANY(${seqs})) AS "existingSteps",
    (SELECT CASE WHEN s.purpose = 'CALL'
        THEN jsonb_build_object('sequence', s.sequence, 'state', s.state, 'purpose', s.purpose)
        -- the last step is a guard read (SPEC §11): it, and the call it guards (rare, off the hot path)
        ELSE jsonb_build_object('sequence', s.sequence, 'state', s.state, 'purpose', s.purpose,
          'row', to_jsonb(s), 'call', (SELECT to_jsonb(c) FROM steps c WHERE c.task_id = t.id
            AND c.attempt = ${attempt} AND c.purpose = 'CALL' AND c.sequence < s.sequence
            ORDER BY c.sequence DESC LIMIT 1)) END
      FROM steps s WHERE s.task_id = t.id AND s.attempt = ${attempt} ORDER BY s.sequence DESC LIMIT 1) AS "lastStep",
    CASE WHEN ${withUsage} AND ${HAS_LIMITS} THEN (SELECT jsonb_build_object(
        'turns', count(*) FILTER (WHERE s.attempt = t.attempt AND s.state = 'COMPLETED'),
        'tokens', coalesce(sum((s.usage->>'totalTokens')::bigint) FILTER (WHERE s.attempt = t.attempt), 0),
        'cost', coalesce(sum(s.cost_usd), 0))
      FROM steps s WHERE s.task_id = t.id AND s.kind = 'MODEL_CALL') END AS "modelUsage"`;

/** $1 task id, $2 attempt, $3 the call's sequences, $4 whether a model call starts. */
const LOAD = `SELECT ${loadColumns('$2', '$3', '$4')}
  FROM external_tasks t WHERE t.id = $1 FOR UPDATE OF t`;

/**
 * The load of a group of calls (group.ts), one row per task found: $1 a JSON array of
 * `{ i, id, attempt, seqs, withUsage }`. Each task is looked up and locked by its primary key (a lateral
 * join: the planner cannot know the array is short, and would scan the table), in task id order, so two
 * groups never wait on each other in a circle.
 */
const LOAD_MANY = `SELECT q.i AS "groupIndex", x.*
  FROM (SELECT * FROM jsonb_to_recordset($1)
          AS r(i int, id uuid, attempt int, seqs int[], "withUsage" boolean) ORDER BY id) q
  CROSS JOIN LATERAL (SELECT ${loadColumns('q.attempt', 'q.seqs', 'q."withUsage"')}
    FROM external_tasks t WHERE t.id = q.id FOR UPDATE OF t) x`;

/** $1 the changed steps (inserted or updated), $2 their history rows in order (the chain trigger runs). */
const WRITE = `WITH s AS (${stepUpsert('$1')} RETURNING 1),
  h AS (${historyInsert(historyFromJson('$2'))} RETURNING 1)
  SELECT (SELECT count(*) FROM s) AS steps, (SELECT count(*) FROM h) AS history`;

const JOURNAL_PREPARE = `PREPARE abada_journal_load (uuid, int, int[], boolean) AS ${LOAD};
PREPARE abada_journal_load_many (jsonb) AS ${LOAD_MANY};
PREPARE abada_journal_write (jsonb, jsonb) AS ${WRITE};`;

/**
 * Statements of other commands that run in a journal transaction's round trips (journalThen's `after`
 * and `last`: the completion's reads and its last statement), prepared on a connection together with
 * the journal's own. Their modules register them when they load, before any connection is prepared.
 */
const more: string[] = [];
let preparing: string | undefined;

/** Registers `PREPARE name AS text` (parameter types inferred from the text) with the journal's. */
export function prepareWithJournal(name: string, text: string): void {
  if (preparing !== undefined) throw new Error(`${name} is registered after connections were prepared.`);
  more.push(`PREPARE ${name} AS ${text};`);
}

/** Every PREPARE a journal connection runs once: the journal's own, then the registered ones. */
function prepareAll(): string {
  preparing ??= [JOURNAL_PREPARE, ...more].join('\n');
  return preparing;
}

/** A value as a literal of an `EXECUTE` statement: NULL, or quoted (the statement's types apply). */
export function literal(value: string | number | null): string {
  return value === null ? 'NULL' : quoted(String(value));
}

/**
 * A string constant, dollar-quoted under a tag the text does not contain: PostgreSQL takes the text as it
 * is, so nothing is escaped — one native search instead of pg.escapeLiteral's walk over every character
 * of a statement's JSON (its steps and history rows).
 */
export function quoted(text: string): string {
  let tag = '$j$';
  for (let i = 0; text.includes(tag); i++) tag = `$j${i}$`;
  return `${tag}${text}${tag}`;
}

/** Connections (pg clients) that hold the two prepared statements. */
const prepared = new WeakSet<object>();

/**
 * `BEGIN` and the load in one round trip (the statements are prepared first on a new connection).
 * Values are inlined: the caller validated the UUID and the integers.
 */
export async function beginAndLoad(
  client: pg.PoolClient,
  taskId: string,
  attempt: number,
  sequences: number[],
  withUsage: boolean,
): Promise<Record<string, unknown> | undefined> {
  const load = `BEGIN; EXECUTE abada_journal_load('${taskId}', ${attempt}, '{${sequences.join(',')}}', ${withUsage})`;
  return (await run(client, load))[0];
}

/** One call of a group: its task, attempt, the sequences it touches and whether a model call starts. */
export interface LoadKey {
  taskId: string;
  attempt: number;
  sequences: number[];
  withUsage: boolean;
}

/** `BEGIN` and the load of a group of calls in one round trip: each found task's row by call index. */
export async function beginAndLoadMany(
  client: pg.PoolClient,
  keys: LoadKey[],
): Promise<Map<number, Record<string, unknown>>> {
  const json = JSON.stringify(
    keys.map((k, i) => ({ i, id: k.taskId, attempt: k.attempt, seqs: k.sequences, withUsage: k.withUsage })),
  );
  const rows = await run(client, `BEGIN; EXECUTE abada_journal_load_many(${quoted(json)})`);
  const byIndex = new Map<number, Record<string, unknown>>();
  for (const { groupIndex, ...row } of rows) byIndex.set(groupIndex as number, row);
  return byIndex;
}

/** Runs `BEGIN; EXECUTE …` (the statements are prepared first on a new connection); the load's rows. */
async function run(client: pg.PoolClient, load: string): Promise<Record<string, unknown>[]> {
  let results: pg.QueryResult[];
  try {
    results = (await client.query(prepared.has(client) ? load : `${prepareAll()}\n${load}`)) as never;
  } catch (e) {
    // Our record of the connection was wrong (a PREPARE outlived a failed query, or the session was
    // reset): roll back whatever began, correct the record and try once more.
    const code = (e as { code?: string }).code;
    if (code !== '42P05' && code !== '26000') throw e;
    await client.query('ROLLBACK');
    if (code === '42P05') prepared.add(client);
    else prepared.delete(client);
    results = (await client.query(prepared.has(client) ? load : `${prepareAll()}\n${load}`)) as never;
  }
  prepared.add(client);
  return results[results.length - 1].rows as Record<string, unknown>[];
}

/**
 * Writes the changes (when there are any), then `after` (a statement prepared with the journal's, on this
 * connection), then COMMIT when asked — one round trip. `after`'s rows, if it was given.
 */
export async function write(
  client: pg.PoolClient,
  changes: { steps: unknown[]; history: unknown[] },
  commit: boolean,
  after?: string,
): Promise<Record<string, unknown>[] | undefined> {
  const text =
    changes.steps.length > 0 || changes.history.length > 0
      ? `EXECUTE abada_journal_write(${quoted(JSON.stringify(changes.steps))}, ${quoted(JSON.stringify(changes.history))})`
      : '';
  const parts = [text, after ?? '', commit ? 'COMMIT' : ''].filter((p) => p !== '');
  if (parts.length === 0) return undefined;
  const result = (await client.query(parts.join('; '))) as pg.QueryResult | pg.QueryResult[];
  if (after === undefined) return undefined;
  const results = Array.isArray(result) ? result : [result];
  return results[text ? 1 : 0].rows;
}
