/**
 * Key rotation: re-seals every sealed column from ABADA_ENCRYPTION_OLD_KEYS to the current key, so the old
 * can be dropped. Short batches (FOR UPDATE, re-seal, update) never block live traffic long; idempotent.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { type Sealer, query } from '../common/index.js';
import { transaction } from '../../db/pg.js';

/** Every sealed column, by table; `keyIdColumn`: the row's key_id, kept in step with its sealed values. */
const SEALED_COLUMNS: { table: string; columns: string[]; keyIdColumn?: string }[] = [
  { table: 'credentials', columns: ['secret_enc'], keyIdColumn: 'key_id' },
  { table: 'steps', columns: ['request_enc', 'response_enc', 'error_enc'], keyIdColumn: 'key_id' },
  { table: 'approvals', columns: ['arguments_enc', 'facts_enc'], keyIdColumn: 'key_id' },
  { table: 'approval_decisions', columns: ['edited_arguments_enc'] },
  { table: 'webhook_subscriptions', columns: ['secret_enc', 'previous_secret_enc'], keyIdColumn: 'key_id' },
];

const id = (n: string) => sql.identifier(n);

function staleWhere(t: (typeof SEALED_COLUMNS)[number], current: string): SQL {
  return sql.join(
    t.columns.map((c) => sql`(${id(c)} IS NOT NULL AND split_part(${id(c)}, '.', 1) <> ${current})`),
    sql` OR `,
  );
}

/** Counts rows still holding a value sealed with a key other than the current one. */
export async function countStale(db: Db, sealer: Sealer): Promise<{ table: string; rows: number }[]> {
  return Promise.all(
    SEALED_COLUMNS.map(async (t) => {
      const [r] = await query<{ n: number }>(
        db,
        sql`SELECT count(*)::bigint AS n FROM ${id(t.table)} WHERE ${staleWhere(t, sealer.currentKeyId)}`,
      );
      return { table: t.table, rows: r.n };
    }),
  );
}

/** Re-seals every stale row with the current key, `batch` rows per transaction. */
export async function rotateKeys(
  db: Db,
  sealer: Sealer,
  { batch, onBatch }: { batch: number; onBatch: (table: string, rows: number) => void },
) {
  const current = sealer.currentKeyId;
  const reseal = (v: string | null) =>
    v === null || sealer.keyIdOf(v) === current ? v : sealer.seal(sealer.open(v));
  const tables: { table: string; rows: number }[] = [];
  for (const t of SEALED_COLUMNS) {
    let rows = 0;
    for (;;) {
      const n = await transaction(db, async (tx) => {
        const stale = await query<Record<string, string | null>>(
          tx,
          sql`SELECT ctid::text AS row_ctid, ${sql.join(t.columns.map(id), sql`, `)}
                FROM ${id(t.table)} WHERE ${staleWhere(t, current)} LIMIT ${batch} FOR UPDATE`,
        );
        for (const r of stale) {
          const sets = t.columns.map((c) => sql`${id(c)} = ${reseal(r[c])}`);
          if (t.keyIdColumn) sets.push(sql`${id(t.keyIdColumn)} = ${current}`);
          await tx.execute(
            sql`UPDATE ${id(t.table)} SET ${sql.join(sets, sql`, `)} WHERE ctid = ${r.row_ctid}::tid`,
          );
        }
        return stale.length;
      });
      rows += n;
      if (n) onBatch(t.table, n);
      if (n < batch) break;
    }
    tables.push({ table: t.table, rows });
  }
  return { keyId: current, tables, total: tables.reduce((s, t) => s + t.rows, 0) };
}
