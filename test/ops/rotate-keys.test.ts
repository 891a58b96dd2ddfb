/**
 * Key rotation: rows sealed with k1 stay readable after the engine moves to k2 (k1 in
 * ABADA_ENCRYPTION_OLD_KEYS), new rows are sealed with k2, `abada rotate-keys` re-seals every old row
 * (so k1 can be dropped), and running it again changes nothing.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.js';
import { startTestEngine, TEST_KEY, type TestEngine } from '../helpers/engine.js';
import { json, Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { abada } from './cli-helpers.js';

const K2 = randomBytes(32).toString('base64');
const v2 = { ABADA_ENCRYPTION_KEY: K2, ABADA_ENCRYPTION_KEY_ID: 'k2' };
let databaseUrl: string;
let client: pg.Client;
const engines: TestEngine[] = [];

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
});
afterAll(async () => {
  for (const e of engines) await e.close();
  await client?.end();
});

async function keyIds(): Promise<Record<string, string[]>> {
  const { rows } = await client.query(`
    SELECT 'credentials' AS t, split_part(secret_enc, '.', 1) AS k FROM credentials
    UNION ALL SELECT 'steps', split_part(request_enc, '.', 1) FROM steps
    UNION ALL SELECT 'steps', split_part(response_enc, '.', 1) FROM steps WHERE response_enc IS NOT NULL
    UNION ALL SELECT 'steps.key_id', key_id FROM steps
    UNION ALL SELECT 'approvals', split_part(arguments_enc, '.', 1) FROM approvals
    UNION ALL SELECT 'webhook_subscriptions', split_part(secret_enc, '.', 1) FROM webhook_subscriptions`);
  const out: Record<string, string[]> = {};
  for (const r of rows) out[r.t] = [...new Set([...(out[r.t] ?? []), r.k])].sort();
  return out;
}

const APPROVAL = `query($id: ID!) { approval(id: $id) { id arguments digest } }`;

describe('key rotation', () => {
  it('reads old rows with an old key, seals new rows with the new one, and rotate-keys moves them all', async () => {
    // Life under k1.
    const e1 = await startTestEngine({ databaseUrl });
    engines.push(e1);
    const { worker } = await setupSeeds(e1);
    const lead = await e1.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
    await e1.ok(e1.adminToken, `mutation { setCredential(name: "crm-token", secret: "old-secret") }`);
    await e1.ok(
      e1.adminToken,
      `mutation($i: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $i) { secret } }`,
      {
        i: { url: 'http://127.0.0.1:9/hook', events: ['incident.opened'] },
      },
    );
    await e1.ok(e1.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
    const sim1 = new WorkerSim(e1, worker, 'rot-1');
    const task = await sim1.fetchOne();
    await sim1.model(task, 1, 'STARTED');
    await sim1.model(task, 1, 'COMPLETED');
    const proposed = await sim1.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89 });
    expect(proposed.step.state).toBe('PROPOSED');
    const approvalId = (await e1.ok(lead, Q.approvals, {})).approvals.edges[0].node.id;
    await e1.close();
    expect(await keyIds()).toMatchObject({
      credentials: ['k1'],
      steps: ['k1'],
      approvals: ['k1'],
      webhook_subscriptions: ['k1'],
    });

    // The engine moves to k2, keeping k1 for reading.
    const e2 = await startTestEngine({
      databaseUrl,
      env: { ...v2, ABADA_ENCRYPTION_OLD_KEYS: `k1:${TEST_KEY}` },
    });
    engines.push(e2);
    const before = (await e2.ok(lead, APPROVAL, { id: approvalId })).approval;
    expect(before.arguments).toEqual({ orderId: '5531', amount: 89 });
    await e2.ok(e2.adminToken, `mutation { setCredential(name: "other-token", secret: "new-secret") }`);
    const { rows: creds } = await client.query(
      `SELECT name, key_id, split_part(secret_enc, '.', 1) AS k FROM credentials ORDER BY name`,
    );
    expect(creds).toEqual([
      { name: 'crm-token', key_id: 'k1', k: 'k1' },
      { name: 'other-token', key_id: 'k2', k: 'k2' },
    ]);

    const env = { DATABASE_URL: databaseUrl, ...v2, ABADA_ENCRYPTION_OLD_KEYS: `k1:${TEST_KEY}` };
    const dry = await abada(['rotate-keys', '--dry-run', '--json'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).stale).toContainEqual({ table: 'steps', rows: 2 });
    const run = await abada(['rotate-keys', '--batch', '2', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ keyId: 'k2', total: 5 });
    expect(report.tables).toContainEqual({ table: 'steps', rows: 2 });
    expect(await keyIds()).toMatchObject({
      credentials: ['k2'],
      steps: ['k2'],
      'steps.key_id': ['k2'],
      approvals: ['k2'],
      webhook_subscriptions: ['k2'],
    });
    const again = await abada(['rotate-keys', '--json'], env);
    expect(JSON.parse(again.stdout).total).toBe(0);
    await e2.close();

    // k1 is gone: everything still opens.
    const e3 = await startTestEngine({ databaseUrl, env: v2 });
    engines.push(e3);
    const after = (await e3.ok(lead, APPROVAL, { id: approvalId })).approval;
    expect(after).toEqual(before);
    const sim3 = new WorkerSim(e3, worker, 'rot-3');
    const decided = await e3.ok(lead, Q.decide, {
      input: { approvalId, decision: 'APPROVE', digest: before.digest },
    });
    expect(decided.decideApproval.state).toBe('APPROVED');
    const resumed = await sim3.fetchOne();
    expect(json(resumed.steps[1].request).arguments).toEqual({ orderId: '5531', amount: 89 });
  });
});
