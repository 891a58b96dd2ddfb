/**
 * The hash-chained history (SPEC §8): append-only for everyone going through the database normally;
 * someone who gets around the trigger (session_replication_role = replica) and edits or deletes a row,
 * or an event a row carries, is caught by verifyAudit, which names the first broken seq. Untouched
 * instances stay valid; rows of one event (the shape written before rows carried a commit's events)
 * and rows of several verify in one chain.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import type { WorkerSim } from '../../helpers/worker-sim.js';
import { D, instance, twoServiceSteps } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;
let db: pg.Client;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ engine, w, db, close } = await twoServiceSteps('two-steps', 't-audit', 'w-1'));
});
afterAll(() => close?.());

/**
 * A finished instance: 8 events in 5 history rows, one per commit — the start (INSTANCE_STARTED,
 * TASK_CREATED), a lease, the completion with the next task's creation, a lease, the last completion.
 */
async function finished(n: number): Promise<string> {
  const id = (await engine.ok(engine.adminToken, Q.start, { key: 'two-steps', v: { n } })).startProcess.id;
  for (let i = 0; i < 2; i++) {
    const t = await w.fetchOne({ topic: 't-audit' });
    await w.complete(t, { [`step${i}`]: n });
  }
  return id;
}

const verify = async (id: string) => (await engine.ok(engine.adminToken, D.audit, { id })).verifyAudit;

async function asReplica(sqlText: string, params: unknown[]) {
  await db.query('BEGIN');
  try {
    await db.query('SET LOCAL session_replication_role = replica');
    const r = await db.query(sqlText, params);
    await db.query('COMMIT');
    return r.rowCount;
  } catch (e) {
    await db.query('ROLLBACK');
    throw e;
  }
}

describe('verifyAudit', () => {
  it('refuses updates and deletes through the normal path', async () => {
    const id = await finished(0);
    await expect(
      db.query(`UPDATE history SET actor = 'mallory' WHERE process_instance_id = $1`, [id]),
    ).rejects.toThrow(/append-only/);
    await expect(db.query(`DELETE FROM history WHERE process_instance_id = $1`, [id])).rejects.toThrow(
      /append-only/,
    );
    expect(await verify(id)).toMatchObject({ valid: true, rows: 5, events: 8, firstBrokenSeq: null });
    // a row of one event hashes as rows did before they could carry more: its canonical text is unchanged
    const { rows } = await db.query(
      `SELECT bool_and(abada_history_canonical(h) = abada_history_canonical_of(h.project_id, h.process_instance_id,
                h.seq, h.event_type, h.actor, h.at, h.task_id, h.attempt, h.sequence, h.approval_id, h.incident_id, h.data)) AS same,
              count(*)::int AS n
         FROM history h WHERE h.process_instance_id = $1 AND h.events IS NULL`,
      [id],
    );
    expect(rows[0]).toEqual({ same: true, n: 2 });
  });

  it('finds an edited row, a deleted last row and a deleted middle row; untouched instances stay valid', async () => {
    const edited = await finished(1);
    const truncated = await finished(2);
    const holed = await finished(3);
    const untouched = await finished(4);
    const before = (await instance(engine, edited)).history;
    expect(before.map((h) => h.eventType)).toEqual([
      'INSTANCE_STARTED',
      'TASK_CREATED',
      'TASK_LEASED',
      'TASK_COMPLETED',
      'TASK_CREATED',
      'TASK_LEASED',
      'TASK_COMPLETED',
      'INSTANCE_COMPLETED',
    ]);
    expect(before.map((h) => h.row)).toEqual([1, 1, 2, 3, 3, 4, 5, 5]);
    for (const id of [edited, truncated, holed, untouched])
      expect(await verify(id)).toMatchObject({ valid: true, rows: 5, events: 8 });

    // row 3 carries the next task's TASK_CREATED: an event inside a row is covered by the row's hash
    expect(
      await asReplica(
        `UPDATE history SET events = jsonb_set(events, '{0,eventType}', '"TASK_CANCELLED"') WHERE process_instance_id = $1 AND seq = 3`,
        [edited],
      ),
    ).toBe(1);
    expect(await verify(edited)).toMatchObject({
      valid: false,
      firstBrokenSeq: 3,
      reason: 'row content does not match its hash',
    });

    expect(
      await asReplica(`DELETE FROM history WHERE process_instance_id = $1 AND seq = 5`, [truncated]),
    ).toBe(1);
    const t = await verify(truncated);
    expect(t).toMatchObject({ valid: false, rows: 4, firstBrokenSeq: 5 });

    expect(await asReplica(`DELETE FROM history WHERE process_instance_id = $1 AND seq = 3`, [holed])).toBe(
      1,
    );
    expect(await verify(holed)).toMatchObject({ valid: false, firstBrokenSeq: 3 });

    expect(await verify(untouched)).toMatchObject({ valid: true, rows: 5, firstBrokenSeq: null });
  });

  it('finds a rewritten last row whose hash was recomputed: the chain head no longer matches', async () => {
    const id = await finished(5);
    // Rewrite row 5 (the last) and recompute its hash the way the trigger does: the rows chain, the head does not.
    await asReplica(`UPDATE history SET actor = 'mallory' WHERE process_instance_id = $1 AND seq = 5`, [id]);
    await asReplica(
      `UPDATE history h SET hash = encode(sha256(convert_to(h.prev_hash || abada_history_canonical(h), 'UTF8')), 'hex')
       WHERE h.process_instance_id = $1 AND h.seq = 5`,
      [id],
    );
    const v = await verify(id);
    expect(v).toMatchObject({ valid: false, rows: 5, firstBrokenSeq: 5 });
    expect(v.reason).toMatch(/rewritten/);
  });

  it('a running instance verifies while rows are appended: never a false alarm', async () => {
    const id = await finished(9);
    const [{ project_id: projectId }] = (
      await db.query('SELECT project_id FROM process_instances WHERE id = $1', [id])
    ).rows as { project_id: string }[];
    // rows of one event each (the shape written before rows carried a commit's events) appended through
    // the chain trigger after rows of several, one commit each, while verifying
    let appending = true;
    let appended = 0;
    const appender = (async () => {
      while (appending) {
        await db.query(
          `INSERT INTO history (project_id, process_instance_id, event_type, actor, data, seq, prev_hash, hash)
           VALUES ($1, $2, 'TEST_APPENDED', 'test', '{}'::jsonb, 0, '', '')`,
          [projectId, id],
        );
        appended++;
      }
    })();
    const results = [];
    for (let i = 0; i < 60; i++) results.push(await verify(id));
    appending = false;
    await appender;
    expect(appended).toBeGreaterThan(20);
    expect(results.filter((v) => !v.valid)).toEqual([]);
    const last = await verify(id);
    expect(last).toMatchObject({ valid: true, rows: 5 + appended, events: 8 + appended });
  });
});
