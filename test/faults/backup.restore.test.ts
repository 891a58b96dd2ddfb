/**
 * Backup and restore (issue 14): `pg_dump` of a running system — an engine and a worker busy with seed
 * 002 and seed 000 instances — restored into a fresh database, and a new engine started on it: every
 * audit chain verifies, and the engine resumes every instance to its end (refunds approved after the
 * restore run once, tickets are not made twice, service tasks complete).
 *
 * Debian's pg_dump is PostgreSQL 15's and refuses to dump a newer server, so this test runs a 15 server
 * of its own from Debian's binaries (`npm test`'s first step installs them: scripts/setup-test-deps.sh).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoScript } from '../../server/demo/scripts.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { DEBIAN_15_BIN, type OwnPostgres, startOwnPostgres } from '../helpers/pg-server.js';
import {
  type Harness,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from '../worker/helpers.js';

const HAVE_15 = ['postgres', 'initdb', 'pg_dump', 'pg_restore'].every((b) =>
  existsSync(path.join(DEBIAN_15_BIN, b)),
);
if (!HAVE_15)
  console.warn(
    `backup.restore.test.ts skipped: PostgreSQL 15 binaries not found in ${DEBIAN_15_BIN} ` +
      '(`npm run setup:test` installs postgresql-15 and postgresql-client-15, or says how).',
  );

let pgs: OwnPostgres;
let h: Harness;
let restored: TestEngine | null = null;
const procs: WorkerProcess[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'abada-dump-'));

beforeAll(async () => {
  if (!HAVE_15) return;
  pgs = await startOwnPostgres({ binDir: DEBIAN_15_BIN });
  h = await startHarness({ script: demoScript, databaseUrl: pgs.url });
}, 120_000);
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await restored?.close();
  await h?.close();
  await pgs?.close();
  rmSync(dir, { recursive: true, force: true });
});

const AUDIT = 'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows reason } }';
const STATE = 'query($id: ID!) { processInstance(id: $id) { state currentNodeId } }';
const OUTCOME = 'query($id: ID!) { processInstance(id: $id) { variables } }';
const PENDING = '{ approvals(state: PENDING) { edges { node { id digest processInstanceId } } } }';

describe.skipIf(!HAVE_15)('pg_dump of a running system, restored into a fresh database', () => {
  it('verifies every audit chain and resumes every instance', async () => {
    const lead = await h.engine.principal('HUMAN', 'fiona', { groups: ['finance-leads'] });
    const notifier = await h.engine.principal('WORKER', 'notifier', { topics: ['notify'] });
    procs.push(spawnWorker(h, 'worker-before', { ABADA_LOG_LEVEL: 'warn' }));
    const triage = [];
    for (let i = 0; i < 3; i++)
      triage.push(await startProcess(h, 'support-triage', { customerId: 'C-42', message: `parcel ${i}` }));
    const refunds = [
      await startProcess(h, 'refund', { customerId: 'C-42', message: 'refund my lost parcel' }),
      await startProcess(h, 'refund', { customerId: 'C-42', message: 'refund my lost parcel, please' }),
    ];
    await waitFor(
      'two refunds waiting for finance',
      async () => {
        const d = await h.engine.ok(lead, PENDING);
        return d.approvals.edges.length === 2;
      },
      60_000,
    );
    // one more while the dump runs: it may be anywhere in its work
    triage.push(await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel late' }));
    const all = [...triage, ...refunds];

    const file = path.join(dir, 'abada.dump');
    execFileSync(path.join(DEBIAN_15_BIN, 'pg_dump'), ['-Fc', '--no-owner', '-f', file, pgs.url]);
    for (const p of procs) p.kill('SIGKILL');
    await h.engine.close();

    const admin = new pg.Client({ connectionString: pgs.urlOf('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE abada_restored');
    await admin.end();
    execFileSync(path.join(DEBIAN_15_BIN, 'pg_restore'), [
      '--no-owner',
      '-d',
      pgs.urlOf('abada_restored'),
      file,
    ]);

    restored = await startTestEngine({ databaseUrl: pgs.urlOf('abada_restored') });
    const engine = restored;
    for (const id of all)
      expect((await engine.ok(engine.adminToken, AUDIT, { id })).verifyAudit.valid).toBe(true);

    // the same tokens and secrets work on the restored database; the work carries on
    procs.push(spawnWorker(h, 'worker-after', { ABADA_URL: engine.url, ABADA_LOG_LEVEL: 'warn' }));
    const pending = (await engine.ok(lead, PENDING)).approvals.edges.map((e: { node: unknown }) => e.node);
    expect(pending).toHaveLength(2);
    for (const a of pending as { id: string; digest: string }[])
      await engine.ok(lead, Q.decide, { input: { approvalId: a.id, decision: 'APPROVE', digest: a.digest } });
    const ended = new Set<string>();
    await waitFor(
      'every instance at its end',
      async () => {
        const fetched = await engine.ok(notifier, Q.fetch, {
          input: {
            workerId: 'notifier',
            maxTasks: 10,
            topics: [{ topicName: 'notify', lockDurationMs: 30_000 }],
          },
        });
        for (const t of fetched.fetchAndLock)
          await engine.ok(notifier, Q.complete, {
            input: { taskId: t.id, workerId: 'notifier', attempt: t.attempt, variables: {}, metadata: {} },
          });
        for (const id of all)
          if ((await engine.ok(engine.adminToken, STATE, { id })).processInstance.state === 'COMPLETED')
            ended.add(id);
        return ended.size === all.length;
      },
      90_000,
    );

    // nothing twice: one ticket per triage instance; both refund instances ask to refund Alice's order
    // 5531, so one refund. The other finds the order refunded when its precondition is read again — or,
    // when both were approved at once and their writes raced past their reads, the CRM refuses it (seed
    // 001 §六: a database transaction cannot fake the atomicity of the system downstream).
    expect(h.crm.countSideEffects('create_ticket')).toBe(triage.length);
    expect(h.crm.countSideEffects('refund')).toBe(1);
    const outcomes = [];
    for (const id of refunds)
      outcomes.push((await engine.ok(engine.adminToken, OUTCOME, { id })).processInstance.variables.outcome);
    expect(outcomes.filter((o) => o.refunded === true)).toHaveLength(1);
    expect(outcomes.filter((o) => o.refunded === false)).toHaveLength(1);
    for (const id of all)
      expect((await engine.ok(engine.adminToken, AUDIT, { id })).verifyAudit.valid).toBe(true);
  }, 240_000);
});
