/**
 * PostgreSQL restarted under a running system (issue 14): an engine, a real worker process and the demo
 * CRM and model run seed 002 on a PostgreSQL of this test's own, which the test stops cleanly and then
 * kills -9 while the work runs. While it is gone the engine says so (/healthz and /readyz 503, requests
 * UNAVAILABLE with a message that says to retry unchanged); when it is back, engine and worker carry on
 * without anyone: every instance ends, each with exactly one ticket sent under its journal key, no
 * attempt failed, and every audit chain verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { type OwnPostgres, startOwnPostgres } from '../helpers/pg-server.js';
import {
  allAtNode,
  type Harness,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from '../worker/helpers.js';

let pgs: OwnPostgres;
let h: Harness;
let worker: WorkerProcess;

beforeAll(async () => {
  pgs = await startOwnPostgres();
  h = await startHarness({ script: supportTriageScript, databaseUrl: pgs.url });
  worker = spawnWorker(h, 'worker-pg', { ABADA_WORKER_CONCURRENCY: '4', ABADA_LOG_LEVEL: 'info' });
}, 120_000);
afterAll(async () => {
  worker?.kill('SIGKILL');
  await h?.close();
  await pgs?.close();
});

const status = async (path: string) => (await fetch(`${h.engine.url}${path}`)).status;

async function startMany(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(await startProcess(h, 'support-triage', { customerId: 'C-42', message: `parcel ${i}` }));
  return ids;
}

async function outage(kind: 'stop' | 'kill9') {
  // Some of the work has reached the CRM: the outage falls in the middle of it.
  const before = h.crm.countCalls();
  await waitFor('work in flight', () => h.crm.countCalls() > before, 30_000);
  if (kind === 'stop') await pgs.stop();
  else await pgs.kill9();
  expect(await status('/healthz')).toBe(503);
  const ready = await fetch(`${h.engine.url}/readyz`);
  expect(ready.status).toBe(503);
  expect(await ready.json()).toMatchObject({ ready: false, database: false });
  const r = await h.engine.gql(h.engine.adminToken, '{ processInstances(first: 1) { totalCount } }');
  expect(r.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
  expect(r.errors?.[0]?.message).toMatch(/Retry the same request unchanged/);
  await new Promise((r) => setTimeout(r, 1000)); // the worker meets the outage too
  await pgs.start();
}

const allTriaged = (ids: string[]) => allAtNode(h, ids, 'notify_customer', 90_000);

describe('PostgreSQL restarts while engine and worker run', () => {
  it('a clean stop and a kill -9 of the postmaster: nothing lost, nothing duplicated, no person needed', async () => {
    const ids = await startMany(6);
    await outage('stop');
    await waitFor('the engine ready again', async () => (await status('/readyz')) === 200, 30_000);
    ids.push(...(await startMany(6)));
    await outage('kill9');
    await waitFor('the engine healthy again', async () => (await status('/healthz')) === 200, 30_000);
    const done = await allTriaged(ids);

    const keys: string[] = [];
    for (const inst of done) {
      const task = inst.tasks.find((t) => t.nodeId === 'triage')!;
      expect(task.state).toBe('COMPLETED');
      // a lease may lapse while the database is down; an attempt never fails for it
      expect(task.attempt).toBe(1);
      const write = task.steps.find((s) => s.toolRef === 'crm/create_ticket' && s.state === 'COMPLETED')!;
      keys.push(write.idempotencyKey!);
    }
    // one side effect per instance, each under its journal key: none lost, none twice
    const effects = h.crm.sideEffects.filter((e) => e.tool === 'create_ticket');
    expect(effects.map((e) => e.key).sort()).toEqual([...keys].sort());
    for (const id of ids) {
      const v = await h.engine.ok(
        h.engine.adminToken,
        'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid } }',
        { id },
      );
      expect(v.verifyAudit.valid).toBe(true);
    }
    // the worker process lived through both outages
    expect(worker.proc.exitCode).toBeNull();
  }, 180_000);
});
