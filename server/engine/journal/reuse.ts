/**
 * Reuse across attempts (SPEC §4 "Later attempts"): a write or approval with the same tool and
 * arguments as one an earlier attempt made is answered from the journal, not sent or approved again.
 * An earlier keyed write left STARTED lends its key (the re-send is deduplicated downstream). Each
 * earlier step is matched at most once, in order, so a call legitimately made twice stays two calls.
 */
import { sql } from 'drizzle-orm';
import type { StepRow } from '../../db/schema.js';
import { type Executor, query } from '../common/index.js';
import type { LockedTaskRow } from '../lease/index.js';

export type Reusable = Pick<
  StepRow,
  'attempt' | 'sequence' | 'state' | 'responseEnc' | 'idempotencyKey' | 'approvalId' | 'comment'
>;

export async function findReusable(tx: Executor, task: LockedTaskRow, sequence: number, digest: string) {
  const rows = await query<Reusable & { resolution_happened: boolean | null; reused: boolean }>(
    tx,
    sql`SELECT s.attempt, s.sequence, s.state, s.response_enc AS "responseEnc", s.idempotency_key AS "idempotencyKey",
               s.approval_id AS "approvalId", s.comment, s.reused,
               (SELECT (i.resolution->>'happened')::boolean FROM incidents i
                 WHERE i.task_id = s.task_id AND i.attempt = s.attempt AND i.sequence = s.sequence
                   AND i.type = 'TOOL_OUTCOME_UNKNOWN' AND i.state = 'RESOLVED' LIMIT 1) AS resolution_happened
        FROM steps s
        WHERE s.task_id = ${task.id} AND s.attempt < ${task.attempt} AND s.digest = ${digest} AND s.kind = 'TOOL_CALL'
          AND s.state IN ('COMPLETED', 'APPROVED', 'STARTED', 'OUTCOME_UNKNOWN')
          -- a delegation an earlier attempt left STARTED belongs to that attempt's child: delegate again
          AND NOT (s.state = 'STARTED' AND s.tool_ref LIKE 'delegate:%')
        ORDER BY s.attempt, s.sequence`,
  );
  // One call made again by a later attempt (a reused copy, or a re-send under a lent key) is still one
  // call: group the rows into calls, and let each call answer with its most advanced row.
  const calls: (typeof rows)[] = [];
  const continued = new Map<number, Set<number>>();
  for (const r of rows) {
    const used = continued.get(r.attempt) ?? new Set<number>();
    continued.set(r.attempt, used);
    let i = r.idempotencyKey
      ? calls.findIndex((c) => c.some((x) => x.idempotencyKey === r.idempotencyKey))
      : -1;
    if (i < 0 && r.reused) i = calls.findIndex((c, j) => !used.has(j) && c[0].attempt < r.attempt);
    if (i < 0) i = calls.push([]) - 1;
    calls[i].push(r);
    used.add(i);
  }
  const rank = (r: (typeof rows)[number]) => {
    if (r.state === 'COMPLETED' || (r.state === 'OUTCOME_UNKNOWN' && r.resolution_happened)) return 3;
    if (r.state === 'STARTED' && r.idempotencyKey !== null) return 2;
    return r.state === 'APPROVED' ? 1 : 0;
  };
  const candidates = calls
    .map((c) => c.reduce((best, r) => (rank(r) >= rank(best) ? r : best)))
    .filter((r) => rank(r) > 0);
  if (candidates.length === 0) return null;
  const [{ n }] = await query<{ n: number }>(
    tx,
    sql`SELECT count(*)::int AS n FROM steps WHERE task_id = ${task.id} AND attempt = ${task.attempt}
        AND sequence < ${sequence} AND digest = ${digest} AND kind = 'TOOL_CALL'`,
  );
  const pick = candidates[n];
  if (!pick) return null;
  // A person said the unknown call happened: it counts as completed with the result they gave.
  return pick.state === 'OUTCOME_UNKNOWN' ? { ...pick, state: 'COMPLETED' as const } : pick;
}
