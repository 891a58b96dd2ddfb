/**
 * The journal's statements (SPEC §4): the load (lock the task, read the steps a call touches, the last
 * step and the usage so far) and the write (every changed step and its history rows, in one
 * statement). With BEGIN before the load and COMMIT after the write, pipelined, a journal call takes
 * two round trips. Generic plans (the pool sets plan_cache_mode): planning the load had cost more than
 * running it (0.3 vs 0.12 ms on 2 cores).
 */
import { statement } from '../pg.js';
import { historyFromJson, historyInsert, stepUpsert } from '../rows.js';
import { LOCKED_TASK_COLUMNS } from './tasks.js';

/** Whether the node has a limit (journal/limits.ts's `hasLimits`): only then is the usage so far summed. */
const HAS_LIMITS = `coalesce(jsonb_strip_nulls(t.agent_work->'limits') ?| array['maxTurns', 'maxTokensTotal', 'budgetUsd'], false)`;

/**
 * The load's columns for one task `t`: `attempt`, `seqs` and `withUsage` are the SQL expressions of the
 * call's attempt, its sequences and whether a model call starts (then limits are checked).
 */
const loadColumns = (attempt: string, seqs: string, withUsage: string) => `${LOCKED_TASK_COLUMNS},
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

/** $1 task id, $2 attempt, $3 the call's sequences, $4 whether a model call starts (after LOCK_TASKS). */
export const JOURNAL_LOAD = statement<Record<string, unknown>>(
  'journal_load',
  `SELECT ${loadColumns('$2::int', '$3::int[]', '$4::boolean')} FROM external_tasks t WHERE t.id = $1`,
);

/**
 * The load of a group of calls (after LOCK_TASKS), one row per task found: $1 a JSON array of
 * `{ i, id, attempt, seqs, withUsage }`. OFFSET 0 keeps the lateral lookup by primary key a subquery:
 * pulled up into a join, the generic plan grew with the tables (3.4 ms a call, against 0.4 ms so).
 */
export const JOURNAL_LOAD_MANY = statement<Record<string, unknown> & { groupIndex: number }>(
  'journal_load_many',
  `SELECT q.i AS "groupIndex", x.*
     FROM (SELECT * FROM jsonb_to_recordset($1::jsonb)
             AS r(i int, id uuid, attempt int, seqs int[], "withUsage" boolean) ORDER BY id) q
     CROSS JOIN LATERAL (SELECT ${loadColumns('q.attempt', 'q.seqs', 'q."withUsage"')}
       FROM external_tasks t WHERE t.id = q.id OFFSET 0) x`,
);

/** $1 the changed steps (inserted or updated), $2 their history rows in order (the chain trigger runs). */
export const JOURNAL_WRITE = statement<{ steps: number; history: number }>(
  'journal_write',
  `WITH s AS (${stepUpsert('$1::jsonb')} RETURNING 1),
     h AS (${historyInsert(historyFromJson('$2::jsonb'))} RETURNING 1)
   SELECT (SELECT count(*) FROM s) AS steps, (SELECT count(*) FROM h) AS history`,
);
