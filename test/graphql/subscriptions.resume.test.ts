/**
 * Events that are never lost (SPEC §13): an approval committed while the engine's LISTEN connection is
 * down still reaches a live subscriber once the listener is back; a subscriber that resumes with
 * `after:` receives exactly what it missed, in order, once, then live events; positions follow commit
 * order even when two transactions commit in the opposite order of their start; an unknown, malformed
 * or pruned cursor is VALIDATION_FAILED.
 */
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineContext } from '../../server/engine/common/index.js';
import { notify } from '../../server/engine/events/index.js';
import { pruneStream } from '../../server/engine/events/testing.js';
import { decide, deployPay, startAndPropose } from '../engine/approvals/setup.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { waitFor } from '../helpers/wait.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { QUIET_MS, STARTED_MS, settle, subscribe, type Subscriber } from '../helpers/ws.js';

const OPENED = `subscription($after: String) { approvalOpened(after: $after) { id state eventCursor } }`;
const CHANGED = `subscription($after: String) { approvalChanged(after: $after) { id state escalated eventCursor } }`;
const INCIDENTS = `subscription($after: String) { incidentOpened(after: $after) { id type eventCursor } }`;

let engine: TestEngine;
let w: WorkerSim;
let fin: string;
let outsider: string;
let otherAdmin: string;
const subs: Subscriber[] = [];

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, ['resume']);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: ['resume'] }), 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  outsider = await engine.principal('HUMAN', 'sam', { groups: ['support'] });
  otherAdmin = await engine.principal('ADMIN', 'other-admin', { projectId: 'other' });
});
afterAll(async () => {
  await Promise.all(subs.map((s) => s.dispose().catch(() => {})));
  await engine?.close();
});

function sub(token: string, query: string, after?: string | null) {
  const s = subscribe(engine.url, token, query, after === undefined ? {} : { after });
  subs.push(s);
  return s;
}

const propose = (amount: number) =>
  startAndPropose(w, 'resume', 'pay/refund', { orderId: `o-${amount}`, amount });
const headCursor = async () => (await engine.ok(fin, '{ eventCursor }')).eventCursor as string;
const positionOf = (cursor: string) => Number(cursor.split('.')[1]);
const opened = (s: Subscriber) => s.events.map((e) => e.data.approvalOpened);
const changed = (s: Subscriber) => s.events.map((e) => e.data.approvalChanged);

/** A second connection of the test's own: it terminates the engine's listener and runs raw transactions. */
async function side(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: engine.databaseUrl });
  await c.connect();
  return c;
}

/** An approval event of the engine's own kind, announced through the engine's notify() in `tx`. */
function escalate(tx: Parameters<Parameters<EngineContext['db']['transaction']>[0]>[0], approvalId: string) {
  return notify(tx, { type: 'approval', approvalId, projectId: 'default', change: 'escalated' });
}

describe('resumable subscriptions', () => {
  it('an approval committed while the LISTEN connection is down arrives once the listener is back', async () => {
    const live = sub(fin, OPENED);
    await live.connected;
    await settle(STARTED_MS);
    const killer = await side();
    // Keep the listener down while the proposal commits: terminate every (re)connection it makes.
    let proposing = true;
    const killing = (async () => {
      while (proposing) {
        await killer.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'abada-listener'`,
        );
        await settle(2);
      }
    })();
    let p: Awaited<ReturnType<typeof propose>>;
    try {
      p = await propose(11);
    } finally {
      proposing = false;
      await killing;
      await killer.end();
    }
    const ev = await live.next((d) => d.approvalOpened.id === p.approvalId, 20_000);
    expect(ev.data.approvalOpened.eventCursor).toMatch(/^v1\.\d+$/);
    await settle(QUIET_MS);
    expect(opened(live).filter((a) => a.id === p.approvalId)).toHaveLength(1);
  });

  it('a subscriber resuming with after: receives exactly what it missed, in order, once, then live', async () => {
    const first = sub(fin, OPENED);
    await first.connected;
    await settle(STARTED_MS);
    const a = await propose(21);
    const seen = await first.next((d) => d.approvalOpened.id === a.approvalId);
    const cursor = seen.data.approvalOpened.eventCursor as string;
    await first.dispose();
    // Missed while away: two approvals opened, one decided (an approvalChanged event, not approvalOpened).
    const b = await propose(22);
    const c = await propose(23);
    expect(
      (await decide(engine, fin, { approvalId: b.approvalId, decision: 'APPROVE', digest: b.digest })).errors,
    ).toBeUndefined();
    expect((await w.fetchOne({ topic: 'resume' })).id).toBe(b.task.id); // the approved task, taken and held
    const resumed = sub(fin, OPENED, cursor);
    const outside = sub(outsider, OPENED, cursor);
    const foreign = sub(otherAdmin, OPENED, cursor);
    await resumed.next((d) => d.approvalOpened.id === c.approvalId, 10_000);
    // A replayed payload is the approval as it stands now, with the cursor of the event replayed.
    expect(opened(resumed).map((x) => [x.id, x.state])).toEqual([
      [b.approvalId, 'APPROVED'],
      [c.approvalId, 'PENDING'],
    ]);
    const [pb, pc] = opened(resumed).map((x) => positionOf(x.eventCursor));
    expect(positionOf(cursor)).toBeLessThan(pb);
    expect(pb).toBeLessThan(pc);
    // Then live, with no gap and no duplicate.
    const d = await propose(24);
    await resumed.next((x) => x.approvalOpened.id === d.approvalId);
    await settle(QUIET_MS);
    expect(opened(resumed).map((x) => x.id)).toEqual([b.approvalId, c.approvalId, d.approvalId]);
    // The same visibility as live: people outside the groups and other projects replay nothing.
    expect(outside.events).toEqual([]);
    expect(foreign.events).toEqual([]);
    expect([...outside.errors, ...foreign.errors, ...resumed.errors]).toEqual([]);
    // A query shows the cursor of the latest event about the approval (b: its decision).
    const decided = await engine.ok(fin, 'query($id: ID!) { approval(id: $id) { eventCursor } }', {
      id: b.approvalId,
    });
    expect(positionOf(decided.approval.eventCursor)).toBeGreaterThan(pc);
  });

  it('positions follow commit order when two transactions commit in the opposite order of their start', async () => {
    const early = await propose(31);
    const late = await propose(32);
    const before = await headCursor();
    const db = engine.context.db;
    let releaseFirst: () => void = () => {};
    const firstMayCommit = new Promise<void>((r) => {
      releaseFirst = r;
    });
    let firstAnnounced: () => void = () => {};
    const announced = new Promise<void>((r) => {
      firstAnnounced = r;
    });
    // T1 starts first and announces its event, then waits; T2 starts, announces and commits; T1 commits.
    const t1 = db.transaction(async (tx) => {
      await escalate(tx, early.approvalId);
      firstAnnounced();
      await firstMayCommit;
    });
    await announced;
    await db.transaction((tx) => escalate(tx, late.approvalId));
    // A subscriber that read the stream now sees T2 only, and keeps its cursor.
    const x = sub(fin, CHANGED, before);
    const onlyLate = await x.next((d) => d.approvalChanged.id === late.approvalId);
    await settle(QUIET_MS);
    expect(changed(x).map((e) => e.id)).toEqual([late.approvalId]);
    const cursor = onlyLate.data.approvalChanged.eventCursor as string;
    await x.dispose();
    releaseFirst();
    await t1;
    // Resuming from T2's cursor yields T1's event: it committed later, so it has the larger position.
    const y = sub(fin, CHANGED, cursor);
    const got = await y.next((d) => d.approvalChanged.id === early.approvalId);
    expect(positionOf(got.data.approvalChanged.eventCursor)).toBeGreaterThan(positionOf(cursor));
    // And a replay from before both gives them in commit order.
    const z = sub(fin, CHANGED, before);
    await z.next((d) => d.approvalChanged.id === early.approvalId);
    await settle(QUIET_MS);
    expect(changed(z).map((e) => e.id)).toEqual([late.approvalId, early.approvalId]);
    expect(changed(z).map((e) => e.escalated)).toEqual([false, false]);
    expect(changed(y).map((e) => e.id)).toEqual([early.approvalId]);
  });

  it('a rolled-back transaction takes no position; one transaction’s events keep their order', async () => {
    const a = await propose(41);
    const b = await propose(42);
    const before = positionOf(await headCursor());
    await engine.context.db
      .transaction(async (tx) => {
        await escalate(tx, a.approvalId);
        throw new Error('roll back');
      })
      .catch(() => {});
    await engine.context.db.transaction(async (tx) => {
      await escalate(tx, a.approvalId);
      await escalate(tx, b.approvalId);
      await escalate(tx, a.approvalId);
    });
    expect(positionOf(await headCursor())).toBe(before + 3);
    const replay = sub(fin, CHANGED, `v1.${before}`);
    await waitFor('three events', () => replay.events.length >= 3, 10_000);
    await settle(QUIET_MS);
    expect(changed(replay).map((e) => [e.id, positionOf(e.eventCursor)])).toEqual([
      [a.approvalId, before + 1],
      [b.approvalId, before + 2],
      [a.approvalId, before + 3],
    ]);
  });

  it('an unknown, malformed or pruned cursor is VALIDATION_FAILED with what to do', async () => {
    const refusal = async (query: string, after: string) => {
      const s = sub(fin, query, after);
      await waitFor('a refusal', () => s.errors.length > 0, 10_000);
      const err = (s.errors[0] as { message: string; extensions: { code: string } }[])[0];
      expect(err.extensions.code).toBe('VALIDATION_FAILED');
      return err.message;
    };
    const head = positionOf(await headCursor());
    expect(await refusal(OPENED, `v1.${head + 1000}`)).toMatch(/not issued here.*Subscribe without after/);
    expect(await refusal(INCIDENTS, 'yesterday')).toMatch(/not an event cursor/);
    // Every event older than the retention is pruned, as a prefix of positions.
    await engine.context.db.execute(
      sql`UPDATE stream_events SET committed_at = committed_at - interval '400 days'`,
    );
    expect(await pruneStream(engine.context)).toBeGreaterThan(0);
    expect(await refusal(CHANGED, 'v1.0')).toMatch(/was pruned.*168 hours.*Query eventCursor/);
    // The head is still a valid cursor; what follows it is replayed and then delivered live.
    const resumed = sub(fin, OPENED, `v1.${head}`);
    await resumed.connected;
    const e = await propose(51);
    await resumed.next((d) => d.approvalOpened.id === e.approvalId);
    expect(resumed.errors).toEqual([]);
    // An object whose events were pruned shows the horizon: a cursor from which nothing is missing.
    const old = await engine.ok(fin, '{ approvals(first: 100) { edges { node { id eventCursor } } } }');
    for (const { node } of old.approvals.edges)
      expect(positionOf(node.eventCursor)).toBeGreaterThanOrEqual(node.id === e.approvalId ? head + 1 : head);
  });
});
