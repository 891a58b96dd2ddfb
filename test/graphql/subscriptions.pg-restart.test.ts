/**
 * After a PostgreSQL restart (SPEC §13): the engine's listener, refused while the server is down, keeps
 * trying; an approval committed once the server is back but before the listener listens again still
 * reaches a live subscriber, once. The test restarts a PostgreSQL server of its own, never the one
 * the other test files share.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../server/db/client.js';
import { runMigrations } from '../../server/db/migrate.js';
import { deployPay, startAndPropose } from '../engine/approvals/setup.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { waitFor } from '../helpers/wait.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { QUIET_MS, STARTED_MS, settle, subscribe, type Subscriber } from '../helpers/ws.js';

let dir: string;
let server: EmbeddedServer;
let engine: TestEngine;
let w: WorkerSim;
let fin: string;
const subs: Subscriber[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'abada-pg-restart-'));
  chmodSync(dir, 0o755); // the embedded server runs as its own OS user when we are root
  server = await startEmbeddedPostgres(path.join(dir, 'pg'));
  await runMigrations(server.url);
  engine = await startTestEngine({ databaseUrl: server.url });
  await deployPay(engine, ['restart']);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: ['restart'] }), 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
}, 120_000);
afterAll(async () => {
  await Promise.all(subs.map((s) => s.dispose().catch(() => {})));
  await engine?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('after a PostgreSQL restart', () => {
  it('an approval committed before the listener is back reaches the live subscriber once', async () => {
    const live = subscribe(engine.url, fin, `subscription { approvalOpened { id eventCursor } }`);
    subs.push(live);
    await live.connected;
    await settle(STARTED_MS);
    const port = server.port;
    await server.stop();
    await settle(1500); // the listener's reconnections are refused meanwhile
    server = await startEmbeddedPostgres(path.join(dir, 'pg'), { port });
    // Keep the listener from listening again until the proposal has committed.
    const killer = new pg.Client({ connectionString: server.url });
    await killer.connect();
    let proposing = true;
    const killing = (async () => {
      while (proposing) {
        await killer.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'abada-listener'`,
        );
        await settle(2);
      }
    })();
    let approvalId: string;
    try {
      // The pool's connections died with the server: the first requests may fail until it reconnects.
      await waitFor(
        'the engine to answer again',
        async () => (await engine.gql(fin, '{ eventCursor }')).data,
        30_000,
      );
      approvalId = (await startAndPropose(w, 'restart', 'pay/refund', { orderId: 'r1', amount: 5 }))
        .approvalId;
    } finally {
      proposing = false;
      await killing;
      await killer.end();
    }
    await live.next((d) => d.approvalOpened.id === approvalId, 20_000);
    await settle(QUIET_MS);
    expect(live.events.filter((e) => e.data.approvalOpened.id === approvalId)).toHaveLength(1);
  }, 120_000);
});
