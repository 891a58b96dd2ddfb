/**
 * Worker health and credentials (SPEC §6): `workers` reports ONLINE after a fetch, ERROR after a failed
 * attempt (consecutiveFailures), ONLINE again after a completion; a fetch for a topic the principal lacks
 * is FORBIDDEN and leaves a FETCH_REJECTED incident and lastRejectionAt. `toolCredential` gives the secret
 * only to the live lease holder; secrets and step payloads are stored encrypted.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { D, GOOD, TICKET, incidentsOf, startTriage, triageProcess } from './helpers.js';

let engine: TestEngine;
let token: string;
const SECRET = 'crm-secret-4f7a9c';

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'health', topic: 't-health' })}`,
  });
  token = await engine.principal('WORKER', 'agent-worker', { topics: ['t-health'] });
});
afterAll(() => engine?.close());

async function workerRow(workerId: string) {
  const d = await engine.ok(engine.adminToken, D.workers);
  const row = d.workers.find((x) => x.workerId === workerId);
  if (!row) throw new Error(`no worker ${workerId}`);
  return row;
}

describe('worker health', () => {
  it('ONLINE after a fetch, ERROR after a failure, ONLINE after a completion; a forbidden fetch is recorded', async () => {
    const w = new WorkerSim(engine, token, 'health-1');
    expect(await w.fetch({ topic: 't-health' })).toEqual([]);
    let row = await workerRow('health-1');
    expect(row).toMatchObject({ health: 'ONLINE', consecutiveFailures: 0, lastRejectionAt: null });
    expect(row.lastHeartbeatAt).not.toBeNull();

    await startTriage(engine, 'C-1', 'health');
    const t1 = await w.fetchOne({ topic: 't-health' });
    expect((await w.failRaw(t1, 'MODEL_UNAVAILABLE')).errors).toBeUndefined();
    row = await workerRow('health-1');
    expect(row).toMatchObject({ health: 'ERROR', consecutiveFailures: 1 });

    const t2 = await w.fetchOne({ topic: 't-health' });
    expect(t2.attempt).toBe(2);
    await w.complete(t2, GOOD);
    expect(await workerRow('health-1')).toMatchObject({ health: 'ONLINE', consecutiveFailures: 0 });

    const refused = await engine.gql(token, Q.fetch, {
      input: { workerId: 'health-1', maxTasks: 1, topics: [{ topicName: 'payments', lockDurationMs: 1000 }] },
    });
    expect(codeOf(refused)).toBe('FORBIDDEN');
    row = await workerRow('health-1');
    expect(row.lastRejectionAt).not.toBeNull();
    expect(row.lastRejectionReason).toContain('payments');
    const [inc] = await incidentsOf(engine, { type: 'FETCH_REJECTED' });
    expect(inc).toMatchObject({ state: 'OPEN', workerId: 'health-1' });
    expect(inc.message).toContain('payments');
    // A human cannot see or act as a worker.
    const human = await engine.principal('HUMAN', 'h', { groups: ['support'] });
    expect(
      codeOf(
        await engine.gql(human, Q.fetch, {
          input: { workerId: 'x', maxTasks: 1, topics: [{ topicName: 't-health', lockDurationMs: 1000 }] },
        }),
      ),
    ).toBe('FORBIDDEN');
  });
});

describe('FETCH_REJECTED', () => {
  it('20 rejected polls are one open incident with a count; another topic or a resolve opens another', async () => {
    const stray = await engine.principal('WORKER', 'stray-worker', { topics: ['t-stray'] });
    const poll = (topicName: string) =>
      engine.gql(stray, Q.fetch, {
        input: { workerId: 'stray-1', maxTasks: 1, topics: [{ topicName, lockDurationMs: 1000 }] },
      });
    const refused = await Promise.all(Array.from({ length: 20 }, () => poll('ledger')));
    for (const r of refused) expect(codeOf(r)).toBe('FORBIDDEN');
    const ledger = () =>
      incidentsOf(engine, { type: 'FETCH_REJECTED' }).then((l) =>
        l.filter((i) => i.message.includes('ledger')),
      );
    const [one, ...more] = await ledger();
    expect(more).toEqual([]);
    expect(one).toMatchObject({ state: 'OPEN', workerId: 'stray-1', count: 20 });
    expect(new Date(one.lastSeenAt).getTime()).toBeGreaterThanOrEqual(new Date(one.createdAt).getTime());
    expect(one.message).toMatch(/stray-worker.*no capability for ledger/);

    // Another topic is another incident; the ledger one is not bumped by it.
    expect(codeOf(await poll('payroll'))).toBe('FORBIDDEN');
    const all = await incidentsOf(engine, { type: 'FETCH_REJECTED' });
    expect(all.filter((i) => i.message.includes('payroll'))).toMatchObject([{ count: 1 }]);
    expect((await ledger())[0].count).toBe(20);

    // Resolved, the next rejection opens a new incident (count 1); the resolved one keeps its count.
    await engine.ok(engine.adminToken, D.resolve, { input: { id: one.id, comment: 'topic removed' } });
    expect(codeOf(await poll('ledger'))).toBe('FORBIDDEN');
    const after = await ledger();
    expect(after.map((i) => [i.state, i.count]).sort()).toEqual([
      ['OPEN', 1],
      ['RESOLVED', 20],
    ]);
  });
});

describe('tool credentials', () => {
  it('only the live lease holder gets the secret; it is stored encrypted, as are step payloads', async () => {
    await engine.ok(engine.adminToken, D.setCredential, { n: 'crm-token', s: SECRET });
    expect(codeOf(await engine.gql(token, D.setCredential, { n: 'crm-token', s: 'x' }))).toBe('FORBIDDEN');
    const w = new WorkerSim(engine, token, 'cred-1');
    await startTriage(engine, 'C-2', 'health');
    const t = await w.fetchOne({ topic: 't-health' });
    const cred = await engine.ok(token, D.credential, { t: t.id, s: 'crm', w: 'cred-1' });
    expect(cred.toolCredential).toEqual({ server: 'crm', name: 'crm-token', secret: SECRET });

    const other = await engine.principal('WORKER', 'other-worker', { topics: ['t-health'] });
    expect(codeOf(await engine.gql(other, D.credential, { t: t.id, s: 'crm', w: 'cred-1' }))).toBe(
      'LEASE_NOT_HELD',
    );
    expect(codeOf(await engine.gql(token, D.credential, { t: t.id, s: 'crm', w: 'cred-2' }))).toBe(
      'LEASE_NOT_HELD',
    );
    expect(
      codeOf(await engine.gql(engine.adminToken, D.credential, { t: t.id, s: 'crm', w: 'cred-1' })),
    ).toBe('FORBIDDEN');
    const human = await engine.principal('HUMAN', 'h2', { groups: ['support'] });
    expect(codeOf(await engine.gql(human, D.credential, { t: t.id, s: 'crm', w: 'cred-1' }))).toBe(
      'FORBIDDEN',
    );
    expect(codeOf(await engine.gql(token, D.credential, { t: t.id, s: 'erp', w: 'cred-1' }))).toBe(
      'BINDING_NOT_FROZEN',
    );

    await w.tool(t, 1, 'crm/create_ticket', 'STARTED', TICKET);
    await w.tool(t, 1, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-SECRET-981' });
    await w.complete(t, GOOD);
    // After the lease ends, nobody gets it.
    expect(codeOf(await engine.gql(token, D.credential, { t: t.id, s: 'crm', w: 'cred-1' }))).toBe(
      'LEASE_NOT_HELD',
    );

    const c = new pg.Client({ connectionString: engine.databaseUrl });
    await c.connect();
    try {
      const creds = await c.query(`SELECT secret_enc FROM credentials`);
      expect(creds.rows.length).toBeGreaterThan(0);
      for (const r of creds.rows) expect(r.secret_enc).not.toContain(SECRET);
      const steps = await c.query(`SELECT request_enc, response_enc FROM steps WHERE task_id = $1`, [t.id]);
      expect(steps.rows).toHaveLength(1);
      expect(steps.rows[0].request_enc).not.toContain('Parcel not received');
      expect(steps.rows[0].response_enc).not.toContain('T-SECRET-981');
      const tasks = await c.query(`SELECT row_to_json(t)::text AS j FROM external_tasks t WHERE id = $1`, [
        t.id,
      ]);
      expect(tasks.rows[0].j).not.toContain(SECRET);
      const hist = await c.query(`SELECT string_agg(row_to_json(h)::text, '') AS j FROM history h`);
      expect(hist.rows[0].j).not.toContain(SECRET);
      expect(hist.rows[0].j).not.toContain('Parcel not received');
      expect(hist.rows[0].j).not.toContain('T-SECRET-981');
    } finally {
      await c.end();
    }
  });
});
