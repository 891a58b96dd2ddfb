/**
 * A fetchAndLock re-sent with its requestId (issue 14): when the answer of a claim is lost (the database
 * restarted after COMMIT, the connection dropped), the worker sends the same request again and gets the
 * same claim back — same tasks, same leases, no second TASK_LEASED, nothing counted as an expiry —
 * instead of new tasks while the first ones' leases lapse unworked.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER, Q } from '../helpers/fixtures.js';
import { events, startTriage, triageProcess } from '../engine/core/helpers.js';

let engine: TestEngine;
let token: string;
let other: string;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'rid', topic: 't-rid' })}`,
  });
  token = await engine.principal('WORKER', 'rid-worker', { topics: ['t-rid'] });
  other = await engine.principal('WORKER', 'rid-other', { topics: ['t-rid'] });
});
afterAll(() => engine?.close());

const fetchWith = (tok: string, workerId: string, requestId: string | null, maxTasks = 2) =>
  engine.gql(tok, Q.fetch, {
    input: {
      workerId,
      maxTasks,
      topics: [{ topicName: 't-rid', lockDurationMs: 30_000 }],
      ...(requestId ? { requestId } : {}),
    },
  });

describe('fetchAndLock with a requestId', () => {
  it('answers a re-sent request with the same claim, and only to the worker and principal that made it', async () => {
    const ids = [
      await startTriage(engine, 'C-42', 'rid'),
      await startTriage(engine, 'C-42', 'rid'),
      await startTriage(engine, 'C-42', 'rid'),
    ];
    const first = await fetchWith(token, 'w-1', 'req-1');
    expect(first.errors).toBeUndefined();
    const claimed = first.data!.fetchAndLock as { id: string; lockExpiresAt: string; attempt: number }[];
    expect(claimed).toHaveLength(2);

    // the same request again: the same two tasks and leases, not the third task
    const again = await fetchWith(token, 'w-1', 'req-1');
    const replay = again.data!.fetchAndLock as typeof claimed;
    expect(replay.map((t) => [t.id, t.lockExpiresAt, t.attempt])).toEqual(
      claimed.map((t) => [t.id, t.lockExpiresAt, t.attempt]),
    );
    // one TASK_LEASED per task: the replay wrote no history
    for (const id of ids) {
      const leased = (await events(engine, id)).filter((e) => e.startsWith('TASK_LEASE'));
      expect(leased.length).toBeLessThanOrEqual(1);
    }

    // another worker id, or another principal, with the same request id gets a claim of its own
    const otherWorker = await fetchWith(token, 'w-2', 'req-1');
    expect(otherWorker.data!.fetchAndLock.map((t: { id: string }) => t.id)).not.toContain(claimed[0].id);
    expect(otherWorker.data!.fetchAndLock).toHaveLength(1); // the third task
    const otherPrincipal = await fetchWith(other, 'w-1', 'req-1');
    expect(otherPrincipal.data!.fetchAndLock).toEqual([]);

    // a new request id claims anew (nothing is left)
    expect((await fetchWith(token, 'w-1', 'req-2')).data!.fetchAndLock).toEqual([]);
    // the first request id still answers its claim while the leases live
    expect((await fetchWith(token, 'w-1', 'req-1')).data!.fetchAndLock).toHaveLength(2);
  });

  it('finds a re-sent claim through its own index, not by reading every live lease', async () => {
    // many live leases of other workers, then one claim with a request id
    for (let i = 0; i < 30; i++) await startTriage(engine, 'C-42', 'rid');
    await fetchWith(token, 'w-many', null, 30);
    await startTriage(engine, 'C-42', 'rid');
    await fetchWith(token, 'w-3', 'req-3', 1);
    const db = new pg.Client({ connectionString: engine.databaseUrl });
    await db.connect();
    try {
      await db.query('ANALYZE external_tasks');
      const plan = await db.query(
        `EXPLAIN (FORMAT JSON) SELECT t.id FROM external_tasks t
          WHERE t.state = 'LEASED' AND t.lease_request_id = $1 AND t.worker_id = $2 AND t.lease_expires_at > now()`,
        ['req-3', 'w-3'],
      );
      const text = JSON.stringify(plan.rows[0]['QUERY PLAN']);
      expect(text).toContain('external_tasks_lease_request_idx');
      expect(text).not.toContain('external_tasks_leased_idx');
    } finally {
      await db.end();
    }
    expect((await fetchWith(token, 'w-3', 'req-3', 1)).data!.fetchAndLock).toHaveLength(1);
  });

  it('refuses a request id that is empty or too long', async () => {
    expect(codeOf(await fetchWith(token, 'w-1', 'x'.repeat(201)))).toBe('VALIDATION_FAILED');
  });
});
