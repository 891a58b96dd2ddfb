/**
 * Process instances and external tasks get time-ordered ids (UUIDv7, migration 0016): version 7, the
 * RFC 9562 variant, and later rows sort after earlier ones, so they share index pages with recent rows.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { setupSeeds } from '../../helpers/worker-sim.js';

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
  await setupSeeds(engine);
});
afterAll(() => engine?.close());

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('ids', () => {
  it('are UUIDv7, in the order the rows were made, with their time in the first 48 bits', async () => {
    const before = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await engine.ok(engine.adminToken, Q.start, { key: 'support-triage', v: { customerId: 'C-42' } }))
          .startProcess.id,
      );
      await new Promise((r) => setTimeout(r, 3)); // a later millisecond
    }
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect([...ids].sort()).toEqual(ids);
    const ms = Number.parseInt(ids[0].replace(/-/g, '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before - 1000);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1000);
    const tasks = await engine.context.db.execute(
      sql`SELECT id::text FROM external_tasks WHERE process_instance_id::text IN (${sql.join(
        ids.map((i) => sql`${i}`),
        sql`, `,
      )}) ORDER BY created_at`,
    );
    const taskIds = (tasks as unknown as { rows: { id: string }[] }).rows.map((r) => r.id);
    expect(taskIds).toHaveLength(3);
    for (const id of taskIds) expect(id).toMatch(UUID_V7);
    expect([...taskIds].sort()).toEqual(taskIds);
  });
});
