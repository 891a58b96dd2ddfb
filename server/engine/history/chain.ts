/**
 * Append-only history, hash-chained per instance (SPEC §8) by a database trigger from one canonical form;
 * `verifyChain` recomputes it with the same SQL function and reports the first row that no longer matches.
 */
import { sql } from 'drizzle-orm';
import { execute } from '../../db/pg.js';
import { type HistoryEntry, historyRecords } from '../../db/rows.js';
import { HISTORY_APPEND } from '../../db/statements/history.js';
import { sha256Hex } from '../../shared/canonical.js';
import { type Executor, query } from '../common/index.js';

export type { HistoryEntry };

/** Appends history rows in order (one statement; the chain trigger links them). */
export async function appendHistory(ex: Executor, ...entries: HistoryEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await execute(ex, HISTORY_APPEND, [JSON.stringify(historyRecords(entries))]);
}

export function actorLabel(actor: { kind: string; name: string; principalId: string }): string {
  return `${actor.kind.toLowerCase()}:${actor.name}#${actor.principalId}`;
}

export type AuditVerification = Awaited<ReturnType<typeof verifyChain>>;

/**
 * Recomputes one instance's chain, reporting the first row whose link or hash does not match. `events`:
 * what the rows carry (a row holds one commit's events for the instance).
 */
export async function verifyChain(ex: Executor, processInstanceId: string) {
  // The rows and the chain head in one statement, so one snapshot: read in two, an append committed
  // between them (a running instance) looked like rows removed after the last one — a false alarm.
  const all = await query<{
    seq: number;
    prev_hash: string;
    hash: string;
    canonical: string;
    events: number;
    is_head: boolean;
  }>(
    ex,
    sql`SELECT h.seq, h.prev_hash, h.hash, abada_history_canonical(h) AS canonical,
               1 + coalesce(jsonb_array_length(h.events), 0) AS events, false AS is_head
          FROM history h WHERE h.process_instance_id = ${processInstanceId}
        UNION ALL
        SELECT hh.seq, NULL, hh.hash, NULL, 0, true
          FROM history_heads hh WHERE hh.process_instance_id = ${processInstanceId}
        ORDER BY is_head, seq`,
  );
  const rows = all.filter((r) => !r.is_head);
  const [head] = all.filter((r) => r.is_head);
  const events = rows.reduce((n, r) => n + r.events, 0);
  const report = (firstBrokenSeq: number | null, reason: string | null, headHash: string | null) => ({
    processInstanceId,
    valid: reason === null,
    rows: rows.length,
    events,
    firstBrokenSeq,
    reason,
    headHash,
  });
  let prev = '';
  for (const [i, r] of rows.entries()) {
    const seq = i + 1;
    if (r.seq !== seq) return report(seq, `row ${seq} is missing (found ${r.seq})`, null);
    if (r.prev_hash !== prev) return report(seq, 'prev_hash does not link to the previous row', null);
    if (sha256Hex(prev + r.canonical) !== r.hash)
      return report(seq, 'row content does not match its hash', null);
    prev = r.hash;
  }
  const n = rows.length;
  if (head && (head.seq !== n || head.hash !== prev)) {
    // Same length but another hash: the last row was rewritten (and re-hashed), nothing was removed.
    return head.seq === n
      ? report(n, 'the last row was rewritten (its hash does not match the chain head)', head.hash)
      : report(n + 1, 'rows after the last one were removed (chain head is further on)', head.hash);
  }
  return report(null, null, prev || null);
}
