/**
 * Closing the engine's database pool has a deadline: a connection whose holder never gives it back (here a
 * query that would run for a minute) does not hold the shutdown; after 5 s it is ended, its query fails,
 * its holder gives it back, and close() returns. (A holder that never gives it back holds close() for one
 * more deadline at most.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../../server/db/client.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine?.close());

it('ends connections still in use after the deadline instead of waiting for them forever', async () => {
  const db = connect(engine.databaseUrl, { max: 2 });
  // a holder that gives its connection back when its query ends, which would be in a minute
  const held = await db.pool.connect();
  const slow = held.query('SELECT pg_sleep(60)').then(
    () => 'finished',
    () => 'failed',
  );
  void slow.then(() => held.release(true));
  const t0 = Date.now();
  await db.close();
  const took = Date.now() - t0;
  expect(took).toBeGreaterThanOrEqual(4_500);
  expect(took).toBeLessThan(9_000);
  expect(await slow).toBe('failed');
}, 30_000);
