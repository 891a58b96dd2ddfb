/**
 * The demo runs the client-credentials path (SPEC §15.1): with its own OpenID Provider, the engine
 * registers the first-party worker `demo-agent` at start, and the in-process Agent Worker signs in as
 * the provider’s client `abada-demo-worker`, proposes Alice’s refund and, once fiona approved, pays it. The
 * dashboard's build is a stand-in (ABADA_WEB_BUILD_COMMAND): this is about the worker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { type Demo, startDemo } from '../../server/demo/demo.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_KEY } from '../helpers/engine.js';
import { createClient } from '../../server/client/index.js';
import { Q } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
let demo: Demo;
const hook = process.env.ABADA_WEB_BUILD_COMMAND;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'abada-demo-oidc-'));
  process.env.ABADA_WEB_BUILD_COMMAND = 'sleep 30';
  const config = loadConfig({
    DATABASE_URL: await createTestDatabase(),
    ABADA_ENCRYPTION_KEY: TEST_KEY,
    ABADA_DATA_DIR: dir,
    PORT: '0',
    LOG_LEVEL: 'error',
  });
  demo = await startDemo({ config });
}, 60_000);
afterAll(async () => {
  await demo?.close();
  if (hook === undefined) delete process.env.ABADA_WEB_BUILD_COMMAND;
  else process.env.ABADA_WEB_BUILD_COMMAND = hook;
  rmSync(dir, { recursive: true, force: true });
});

describe('the demo’s Agent Worker', () => {
  it('signs in with the demo provider’s client credentials and carries Alice’s refund through', async () => {
    expect(demo.identityProvider).not.toBeNull();
    const rows = await waitFor('the refund proposed by the signed-in worker', async () => {
      const r = await demo.engine.context.db.execute(sql`
        SELECT p.name, p.oidc_client_id, p.project_id, a.state
        FROM workers w JOIN principals p ON p.id = w.principal_id
        JOIN approvals a ON a.state = 'PENDING'
        WHERE w.worker_id = 'demo-agent-worker'`);
      return r.rows.length ? r.rows : null;
    });
    expect(rows[0]).toEqual({
      name: 'demo-agent',
      oidc_client_id: 'abada-demo-worker',
      project_id: null,
      state: 'PENDING',
    });
    // fiona approves; the worker, global and signed in the same way, executes the refund and finishes
    const fiona = demo.users.find((u) => u.name === 'fiona')?.token ?? '';
    const asFiona = createClient({ url: demo.engine.url, token: fiona });
    const pending = (await asFiona.request(Q.approvals, { state: 'PENDING' })).approvals;
    const [{ node }] = pending.edges;
    await asFiona.request(Q.decide, {
      input: { approvalId: node.id, decision: 'APPROVE', digest: node.digest, comment: 'lost parcel, due' },
    });
    await waitFor('Alice’s refund to complete', async () => {
      const r = await demo.engine.context.db.execute(
        sql`SELECT state FROM process_instances WHERE id = ${demo.aliceInstanceId}`,
      );
      return (r.rows[0] as { state: string } | undefined)?.state === 'COMPLETED';
    });
  }, 60_000);
});
