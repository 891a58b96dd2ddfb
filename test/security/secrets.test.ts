/**
 * Secrets and evidence: credentials and step payloads are unreadable in the raw rows; prompts, secrets
 * and tokens never appear in history, attempt metadata, incidents, approvals' clear columns, principals
 * or error messages; tokens are stored hashed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

const SECRET = 'sk-live-CRM-7f3a9c1e5b2d';
const PROMPT_MARK = 'look the customer up';
const ARG_MARK = 'Parcel-not-received-4711';
const RESULT_MARK = 'T-SECRET-981';

let engine: TestEngine;
let db: pg.Client;
let workerToken: string;
let humanToken: string;

beforeAll(async () => {
  engine = await startTestEngine();
  ({ worker: workerToken } = await setupSeeds(engine));
  humanToken = await engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
  await engine.ok(
    engine.adminToken,
    'mutation($s: String!) { setCredential(name: "crm-token", secret: $s) }',
    { s: SECRET },
  );
  const w = new WorkerSim(engine, workerToken);
  await engine.ok(engine.adminToken, Q.start, {
    key: 'support-triage',
    v: { customerId: 'C-42', message: 'hello' },
  });
  const t = await w.fetchOne();
  const cred = await engine.ok(
    workerToken,
    'query($t: ID!) { toolCredential(taskId: $t, server: "crm", workerId: "sim-1") { secret } }',
    { t: t.id },
  );
  expect(cred.toolCredential.secret).toBe(SECRET);
  await w.journal(t, 1, {
    kind: 'MODEL_CALL',
    state: 'STARTED',
    model: 'gemini-3.6-flash',
    request: { model: 'gemini-3.6-flash', messagesHash: 'abc' },
  });
  await w.journal(t, 1, {
    kind: 'MODEL_CALL',
    state: 'COMPLETED',
    model: 'gemini-3.6-flash',
    request: { model: 'gemini-3.6-flash', messagesHash: 'abc' },
    response: { role: 'assistant', content: PROMPT_MARK },
  });
  const args = { customerId: 'C-42', subject: ARG_MARK, priority: 'high' };
  await w.tool(t, 2, 'crm/create_ticket', 'STARTED', args);
  await w.tool(t, 2, 'crm/create_ticket', 'COMPLETED', args, { ticketId: RESULT_MARK });
  await w.complete(
    t,
    { triage: { ticketId: 'T-1', priority: 'high', _confidence: 95 } },
    { promptHash: 'b'.repeat(64), confidence: 95 },
  );
  db = new pg.Client({ connectionString: engine.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await engine?.close();
});

async function dump(table: string, except: string[] = []): Promise<string> {
  const { rows } = await db.query(`SELECT to_jsonb(t) AS j FROM ${table} t`);
  return rows
    .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r.j).filter(([k]) => !except.includes(k)))))
    .join('\n');
}

describe('secrets and evidence', () => {
  it('keeps credentials and step payloads encrypted in the raw rows', async () => {
    expect(await dump('credentials')).not.toContain(SECRET);
    const steps = await dump('steps');
    for (const mark of [PROMPT_MARK, ARG_MARK, RESULT_MARK]) expect(steps).not.toContain(mark);
    const { rows } = await db.query('SELECT request_enc, key_id FROM steps LIMIT 1');
    expect(rows[0].request_enc.startsWith(`${rows[0].key_id}.`)).toBe(true);
  });

  it('never writes prompts, secrets, arguments or tokens into history, metadata, incidents or principals', async () => {
    const places = [
      await dump('history'),
      await dump('external_tasks', ['agent_work']),
      await dump('incidents'),
      await dump('principals'),
      await dump('workers'),
      await dump('task_reports'),
    ];
    const text = places.join('\n');
    for (const mark of [
      SECRET,
      PROMPT_MARK,
      ARG_MARK,
      RESULT_MARK,
      workerToken,
      humanToken,
      engine.adminToken,
    ])
      expect(text).not.toContain(mark);
    // attempt metadata keeps its fixed fields only (the GraphQL input refuses anything else, e.g. a prompt)
    const { rows } = await db.query(`SELECT metadata FROM external_tasks WHERE state = 'COMPLETED'`);
    expect(Object.keys(rows[0].metadata)).not.toContain('prompt');
  });

  it('stores tokens hashed', async () => {
    const { rows } = await db.query('SELECT token_hash FROM principals');
    for (const r of rows) expect(r.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(workerToken);
  });

  it('keeps secrets out of error messages', async () => {
    const r = await engine.gql(
      humanToken,
      'query { toolCredential(taskId: "00000000-0000-0000-0000-000000000000", server: "crm", workerId: "x") { secret } }',
    );
    expect(JSON.stringify(r)).not.toContain(SECRET);
    const bad = await engine.gql(`${workerToken}x`, '{ me { id } }');
    expect(JSON.stringify(bad)).not.toContain(workerToken);
  });
});
