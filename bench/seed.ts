/**
 * Bulk-inserts OPEN service tasks (with their instances) straight in SQL: a backlog in seconds. Each
 * instance also gets its history chain head, as a started instance has (its start was journaled): the
 * claim then appends to an existing chain, as in production.
 */
import type pg from 'pg';

export async function seedOpenTasks(
  pool: pg.Pool,
  topic: string,
  n: number,
  opts: { vacuum?: boolean } = {},
): Promise<void> {
  const { rows } = await pool.query(
    `SELECT id FROM definitions WHERE key = 'claim' ORDER BY version DESC LIMIT 1`,
  );
  const definitionId = rows[0].id as string;
  const batch = 100_000;
  for (let done = 0; done < n; done += batch) {
    const m = Math.min(batch, n - done);
    await pool.query(
      `WITH inst AS (
         INSERT INTO process_instances (project_id, definition_id, key, version, state, current_node_id, variables)
         SELECT 'default', $1, 'claim', 1, 'ACTIVE', 'work', '{}'::jsonb FROM generate_series(1, $2)
         RETURNING id),
       heads AS (
         INSERT INTO history_heads (process_instance_id, seq, hash)
         SELECT id, 1, md5(id::text) FROM inst)
       INSERT INTO external_tasks (project_id, process_instance_id, node_id, node_type, topic_name, state, max_attempts)
       SELECT 'default', id, 'work', 'service', $3, 'OPEN', 3 FROM inst`,
      [definitionId, m, topic],
    );
  }
  if (opts.vacuum !== false) await pool.query('VACUUM ANALYZE external_tasks');
}
