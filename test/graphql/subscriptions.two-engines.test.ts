/**
 * Scale-out (SPEC §10): two engine processes on one database. Subscribers connected to engine B see what
 * engine A commits, through PostgreSQL LISTEN/NOTIFY: approvalOpened (only for people in the groups),
 * approvalChanged, taskChanged(processInstanceId) and incidentOpened. Anonymous sockets are refused.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { decide, tool } from '../engine/approvals/setup.js';
import { QUIET_MS, STARTED_MS, settle, subscribe, type Subscriber } from '../helpers/ws.js';
import { waitFor } from '../helpers/wait.js';

const MAIL = `
---
kind: Process
key: mail
start: work
nodes:
  - id: work
    type: agent
    topic: mail
    model: gemini-3.6-flash
    prompt: Mail the customer.
    tools: [crm/send_email]
    result_variable: mailed
    next: done
  - { id: done, type: end }
`;
const OPENED = `subscription { approvalOpened { id toolRef candidateGroups arguments digest processInstanceId } }`;
const CHANGED = `subscription { approvalChanged { id state decidedBy digest } }`;
const TASKS = `subscription($id: ID) { taskChanged(processInstanceId: $id) { id state processInstanceId } }`;
const INCIDENTS = `subscription { incidentOpened { id type taskId sequence } }`;
const ALICE = { orderId: '5531', amount: 89, currency: 'EUR' };

let a: TestEngine;
let b: TestEngine;
let w: WorkerSim;
let mailer: WorkerSim;
let lead: string;
let support: string;
let workerToken: string;
const subs: Subscriber[] = [];

function sub(engine: TestEngine, token: string | null, query: string, vars: Record<string, unknown> = {}) {
  const s = subscribe(engine.url, token, query, vars);
  subs.push(s);
  return s;
}

async function propose() {
  const started = await a.ok(a.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
  const task = await w.fetchOne();
  expect(task.processInstanceId).toBe(started.startProcess.id);
  const sentAt = Date.now();
  const j = await tool(w, task, 1, 'crm/refund', 'PROPOSED', ALICE);
  return {
    instanceId: started.startProcess.id as string,
    task,
    sentAt,
    approvalId: j.step.approvalId!,
    digest: j.step.digest,
  };
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

beforeAll(async () => {
  a = await startTestEngine();
  const seeded = await setupSeeds(a, MAIL);
  workerToken = seeded.worker;
  b = await startTestEngine({ databaseUrl: a.databaseUrl });
  w = new WorkerSim(a, workerToken, 'agent-worker-a');
  mailer = new WorkerSim(a, await a.principal('WORKER', 'mailer', { topics: ['mail'] }), 'mailer-a');
  lead = await a.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
  support = await a.principal('HUMAN', 'sam', { groups: ['support'] });
});
afterAll(async () => {
  await Promise.all(subs.map((s) => s.dispose().catch(() => {})));
  await b?.close();
  await a?.close();
});

describe('subscriptions across two engine processes', () => {
  it('approvalOpened reaches a finance lead on engine B within 2 s; support and workers get nothing', async () => {
    const leadSub = sub(b, lead, OPENED);
    const supportSub = sub(b, support, OPENED);
    const workerSub = sub(b, workerToken, OPENED);
    await Promise.all([leadSub.connected, supportSub.connected, workerSub.connected]);
    await settle(STARTED_MS);
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const p = await propose();
      const ev = await leadSub.next((d) => d.approvalOpened.id === p.approvalId, 2000);
      latencies.push(ev.at - p.sentAt);
      expect(ev.data.approvalOpened).toEqual({
        id: p.approvalId,
        toolRef: 'crm/refund',
        candidateGroups: ['finance-leads'],
        arguments: ALICE,
        digest: p.digest,
        processInstanceId: p.instanceId,
      });
    }
    console.log(
      `[latency] proposal journaled on A → approvalOpened on B (n=${latencies.length}): p50 ${pct(latencies, 0.5)} ms, max ${Math.max(...latencies)} ms`,
    );
    // The bound this test exists to show (next() above already gives up at 2 s): p50 is tens of ms.
    expect(Math.max(...latencies)).toBeLessThan(2000);
    expect(leadSub.events).toHaveLength(20);
    await settle(QUIET_MS);
    expect(supportSub.events).toEqual([]);
    expect(workerSub.events).toEqual([]);
    expect([...leadSub.errors, ...supportSub.errors, ...workerSub.errors]).toEqual([]);
  });

  it('refuses anonymous and unknown-token websocket connections', async () => {
    for (const token of [null, 'abada_not-a-real-token']) {
      const anon = sub(b, token, OPENED);
      await expect(anon.connected).rejects.toThrow(/closed 4403/);
      expect(anon.closed?.code).toBe(4403);
      expect(anon.events).toEqual([]);
    }
  });

  it('approvalChanged and taskChanged(processInstanceId) deliver on B what A commits', async () => {
    // B must have heard the start's own task event before the instance's subscriber exists, or a NOTIFY
    // late on a loaded machine reaches that subscriber too: every task event on B, heard first
    const heard = sub(b, b.adminToken, TASKS);
    await heard.connected;
    await settle(STARTED_MS);
    const started = await a.ok(a.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-7' } });
    const instanceId = started.startProcess.id as string;
    await heard.next((d) => d.taskChanged.processInstanceId === instanceId, 2000);
    const changed = sub(b, lead, CHANGED);
    const supportChanged = sub(b, support, CHANGED);
    const tasks = sub(b, b.adminToken, TASKS, { id: instanceId });
    await Promise.all([changed.connected, supportChanged.connected, tasks.connected]);
    await settle(STARTED_MS);
    const task = await w.fetchOne();
    expect(task.processInstanceId).toBe(instanceId);
    const j = await tool(w, task, 1, 'crm/refund', 'PROPOSED', ALICE);
    await tasks.next((d) => d.taskChanged.state === 'AWAITING_APPROVAL');
    const other = await propose(); // another instance: not delivered to this taskChanged subscriber
    const sentAt = Date.now();
    const r = await decide(a, lead, {
      approvalId: j.step.approvalId!,
      decision: 'APPROVE',
      digest: j.step.digest,
    });
    expect(r.errors).toBeUndefined();
    const ev = await changed.next((d) => d.approvalChanged.id === j.step.approvalId, 2000);
    expect(ev.data.approvalChanged).toEqual({
      id: j.step.approvalId,
      state: 'APPROVED',
      decidedBy: 'fiona',
      digest: j.step.digest,
    });
    const open = await tasks.next((d) => d.taskChanged.state === 'OPEN', 2000);
    expect(open.data.taskChanged).toEqual({ id: task.id, state: 'OPEN', processInstanceId: instanceId });
    console.log(
      `[latency] decision on A → approvalChanged on B ${ev.at - sentAt} ms, taskChanged on B ${open.at - sentAt} ms`,
    );
    await settle(QUIET_MS);
    expect(tasks.events.map((e) => e.data.taskChanged.processInstanceId)).not.toContain(other.instanceId);
    expect(tasks.events.map((e) => e.data.taskChanged.state)).toEqual(['AWAITING_APPROVAL', 'OPEN']);
    expect(supportChanged.events).toEqual([]);
    // The approved task is taken again (and stays leased), so later proposals fetch their own tasks.
    expect((await w.fetchOne()).id).toBe(task.id);
  });

  it('keeps delivering after the LISTEN connection of each engine was cut', async () => {
    const leadSub = sub(b, lead, OPENED);
    await leadSub.connected;
    await settle(STARTED_MS);
    const cut = await a.context.db.execute(
      sql`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'abada-listener'`,
    );
    expect(cut.rows.length).toBe(2);
    // Each engine's notifier reconnects, LISTENs again (after 500 ms) and catches up from the stream.
    await waitFor('both engines to LISTEN again', async () => {
      const r = await a.context.db.execute(
        sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'abada-listener'`,
      );
      return (r.rows[0] as { n: number }).n === 2;
    });
    const p = await propose();
    const ev = await leadSub.next((d) => d.approvalOpened.id === p.approvalId, 2000);
    expect(ev.data.approvalOpened.id).toBe(p.approvalId);
  });

  it('incidentOpened delivers on B an incident opened on A', async () => {
    const incidents = sub(b, b.adminToken, INCIDENTS);
    const workerIncidents = sub(b, workerToken, INCIDENTS);
    await Promise.all([incidents.connected, workerIncidents.connected]);
    await settle(STARTED_MS);
    await a.ok(a.adminToken, Q.start, { key: 'mail', v: {} });
    const t = await mailer.fetchOne({ topic: 'mail' });
    await tool(mailer, t, 1, 'crm/send_email', 'STARTED', { to: 'alice@example.com', body: 'Refunded' });
    await mailer.expireLease(t);
    const sentAt = Date.now();
    expect(await mailer.fetch({ topic: 'mail' })).toEqual([]); // the keyless write is never re-sent
    const ev = await incidents.next((d) => d.incidentOpened.taskId === t.id, 2000);
    expect(ev.data.incidentOpened).toMatchObject({ type: 'TOOL_OUTCOME_UNKNOWN', taskId: t.id, sequence: 1 });
    console.log(`[latency] incident on A → incidentOpened on B ${ev.at - sentAt} ms`);
    await settle(QUIET_MS);
    expect(workerIncidents.events).toEqual([]);
  });
});
