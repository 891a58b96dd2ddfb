/**
 * The set-based chain append (migration 0017, `historyChainedCtes`): a claim's TASK_LEASED rows move
 * their instances' chain heads in one UPDATE and are inserted already chained; rows the set cannot chain
 * (several rows of one instance, an instance with no head yet) fall back to the per-row trigger. Every
 * chain stays valid for verifyAudit, and the chained rows are the ones the trigger would have written.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyChainedCtes } from '../../../server/db/rows.js';
import { verifyChain } from '../../../server/engine/history/chain.js';
import type { TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import type { WorkerSim } from '../../helpers/worker-sim.js';
import { D, twoServiceSteps } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;
let db: pg.Client;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ engine, w, db, close } = await twoServiceSteps('chain-set', 't-chain-set', 'w-set'));
});
afterAll(() => close?.());

const start = async (n: number) =>
  (await engine.ok(engine.adminToken, Q.start, { key: 'chain-set', v: { n } })).startProcess.id as string;
const verify = async (id: string) => (await engine.ok(engine.adminToken, D.audit, { id })).verifyAudit;

/** seq, event and whether the row's hash links to the row before it, per instance. */
async function chainOf(id: string) {
  const r = await db.query<{ seq: number; event_type: string; prev_hash: string; hash: string }>(
    'SELECT seq, event_type, prev_hash, hash FROM history WHERE process_instance_id = $1 ORDER BY seq',
    [id],
  );
  return r.rows;
}

describe('set-based chain append', () => {
  it("chains a claim's TASK_LEASED rows of many instances in one statement, valid for verifyAudit", async () => {
    // maxTasks 12: a claim that may take 10 or more appends set-based (smaller ones use the trigger)
    const ids: string[] = [];
    for (let n = 0; n < 12; n++) ids.push(await start(n));
    const claimed = await w.fetch({ topic: 't-chain-set', maxTasks: 12 });
    expect(claimed).toHaveLength(12);
    for (const id of ids) {
      const rows = await chainOf(id);
      const leased = rows.filter((r) => r.event_type === 'TASK_LEASED');
      expect(leased).toHaveLength(1);
      // the leased row is the chain's last one and links to the row before it
      expect(rows.at(-1)?.event_type).toBe('TASK_LEASED');
      expect(rows.at(-1)?.prev_hash).toBe(rows.at(-2)?.hash);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    }
    // finish the first task of each and claim the second ones: the chain goes on after a set-based row
    for (const t of claimed) await w.complete(t, { first: true });
    // the second tasks in two claims: one set-based (10), one by the trigger (2)
    const second = [
      ...(await w.fetch({ topic: 't-chain-set', maxTasks: 10 })),
      ...(await w.fetch({ topic: 't-chain-set', maxTasks: 2 })),
    ];
    expect(second).toHaveLength(12);
    for (const t of second) await w.complete(t, { second: true });
    for (const id of ids) {
      const v = await verify(id);
      expect(v, id).toMatchObject({ valid: true, firstBrokenSeq: null });
      expect((await chainOf(id)).filter((r) => r.event_type === 'TASK_LEASED')).toHaveLength(2);
    }
  });

  it('falls back to the trigger for several rows of one instance and for an instance with no head', async () => {
    const [single, several] = [await start(10), await start(11)];
    const fresh = '018f2b7e-0000-7000-8000-00000000c4a1'; // no history, no head
    const rows = [
      [single, 'ONE'],
      [several, 'FIRST'],
      [several, 'SECOND'],
      [fresh, 'NEW_1'],
      [fresh, 'NEW_2'],
    ] as const;
    const source = rows
      .map(
        ([id, ev], ord) => `SELECT 'default'::text AS project_id, '${id}'::uuid AS process_instance_id,
          '${ev}'::text AS event_type, 'test'::text AS actor, NULL::uuid AS task_id, NULL::int AS attempt,
          NULL::int AS sequence, NULL::uuid AS approval_id, NULL::uuid AS incident_id,
          jsonb_build_object('n', ${ord}) AS data, ${ord} AS ord`,
      )
      .join(' UNION ALL ');
    const before = {
      single: (await chainOf(single)).length,
      several: (await chainOf(several)).length,
    };
    const r = await db.query(
      `WITH ${historyChainedCtes('h', source)} SELECT (SELECT count(*) FROM h)::int AS n,
         (SELECT count(*) FROM h_heads)::int AS set_based`,
    );
    expect(r.rows[0]).toEqual({ n: 5, set_based: 1 }); // only `single` went through the set
    const events = async (id: string) => (await chainOf(id)).map((x) => x.event_type);
    expect((await events(single)).slice(before.single)).toEqual(['ONE']);
    expect((await events(several)).slice(before.several)).toEqual(['FIRST', 'SECOND']);
    expect(await events(fresh)).toEqual(['NEW_1', 'NEW_2']);
    for (const id of [single, several, fresh]) {
      expect(await verifyChain(engine.context.db, id), id).toMatchObject({ valid: true });
    }
  });

  it('a row inserted already chained with a wrong hash is caught by verifyAudit', async () => {
    const id = await start(20);
    const [head] = (
      await db.query('SELECT seq, hash FROM history_heads WHERE process_instance_id = $1', [id])
    ).rows;
    await db.query(
      `INSERT INTO history (project_id, process_instance_id, event_type, actor, data, seq, prev_hash, hash)
       VALUES ('default', $1, 'FORGED', 'test', '{}', $2, $3, 'f00d')`,
      [id, head.seq + 1, head.hash],
    );
    const v = await verify(id);
    expect(v.valid).toBe(false);
    expect(v.firstBrokenSeq).toBe(head.seq + 1);
  });
});
