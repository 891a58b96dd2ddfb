/**
 * `npm run soak`: many instances of seeds 002 and 000 (with a keyless e-mail variant) through two engine
 * processes and several worker processes, under faults — workers SIGKILLed at random moments and in the
 * middle of a write, an engine restarted, approvals decided or cancelled while they wait, unknown tool
 * outcomes resolved from the CRM's record — then the guarantees checked from the database, the CRM and
 * the model. Loopback only, bounded in time and count; exits non-zero on any violation.
 *
 *   --instances N (SOAK_INSTANCES, default 200)   --minutes M (SOAK_MINUTES, hard cap, default 15)
 *   --smoke       (~20 instances, ~1–2 minutes)   --json FILE (also write the table as JSON)
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../server/db/client.js';
import { runMigrations } from '../server/db/migrate.js';
import { startCrmServer } from '../server/demo/crm-server.js';
import { startModelServer } from '../server/demo/model-server.js';
import { approvalPass, type BotContext, incidentPass, loop, newBotStats, SETTLE_MS } from './bots.js';
import { printTable, runChecks } from './check.js';
import { CRM_SECRET, DEFINITIONS, storyFor } from './defs.js';
import { EngineSlot, Fleet, gql, type WorkerEnv } from './procs.js';
import { startOwnPostgres } from '../test/helpers/pg-server.js';
import { query, resilientPool, setUpFaults } from './faults.js';
import { startSubscribers } from './subscribers.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const SMOKE = process.argv.includes('--smoke');
const INSTANCES = Number(arg('instances') ?? process.env.SOAK_INSTANCES ?? (SMOKE ? 20 : 200));
const MINUTES = Number(arg('minutes') ?? process.env.SOAK_MINUTES ?? (SMOKE ? 3 : 15));
const JSON_OUT = arg('json');
const WORKERS = SMOKE ? 3 : 4;
// tasks per Agent Worker; --concurrency 12 makes its fetches ask for 10 or more (the claim's set-based audit append)
const CONCURRENCY = Number(arg('concurrency') ?? 3);
const LOCK_MS = 2000;
/** Instances are started over this span (about one a second; the rest of the time drains). */
const START_SPAN_MS = Math.min(MINUTES * 60_000 * 0.6, Math.max(INSTANCES * 1000, 20_000));
const ADMIN = `soak-admin-${randomBytes(8).toString('hex')}`;
const KEY = randomBytes(32).toString('base64');

const t0 = Date.now();
const log = (line: string) =>
  process.stderr.write(`[soak ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
/** Undone on a crash of the runner, so no process outlives it. */
const cleanups: (() => Promise<unknown>)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rnd = (a: number, b: number) => a + Math.random() * (b - a);

async function ok(url: string, token: string, query: string, variables?: Record<string, unknown>) {
  const r = await gql(url, token, query, variables);
  if (r.errors) throw new Error(JSON.stringify(r.errors).slice(0, 2000));
  return r.data;
}

async function main(): Promise<number> {
  const deadline = t0 + MINUTES * 60_000;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'abada-soak-'));
  chmodSync(dir, 0o755); // the embedded server runs as its own OS user when we are root
  const logDir = path.join(dir, 'logs');
  mkdirSync(logDir);
  log(
    `instances ${INSTANCES}, cap ${MINUTES} min, ${WORKERS} workers × ${CONCURRENCY}, lease ${LOCK_MS} ms, logs ${logDir}`,
  );
  // a server of the soak's own, which the faults stop and kill -9 (soak/faults.ts)
  const pgServer = await startOwnPostgres();
  cleanups.push(() => pgServer.close());
  await runMigrations(pgServer.url);
  const [crm, model] = await Promise.all([
    startCrmServer({ token: CRM_SECRET, overRefunds: 'allow' }),
    startModelServer({ script: (await import('./defs.js')).soakScript }),
  ]);
  const engineEnv = (port: number) => ({
    DATABASE_URL: pgServer.url,
    ABADA_ENCRYPTION_KEY: KEY,
    ABADA_ADMIN_TOKEN: ADMIN,
    PORT: String(port),
    ABADA_HEARTBEAT_DEBOUNCE_MS: '1000',
    ABADA_MAX_LEASE_EXPIRIES: '3',
  });
  const engines: EngineSlot[] = [];
  cleanups.unshift(() => Promise.allSettled(engines.map((e) => e.stop())));
  for (const name of ['A', 'B']) engines.push(await startSlot(name, engineEnv));
  const [A, B] = engines.map((e) => e.url);
  const fx = await setUpFaults(pgServer, crm.url, A, log);
  cleanups.unshift(() => fx.faults.close());

  await ok(A, ADMIN, `mutation($s: String!) { deploy(source: $s) { definitions { key version } } }`, {
    s: DEFINITIONS(fx.mcpUrl),
  });
  await ok(A, ADMIN, `mutation { setCredential(name: "crm-token", secret: "${CRM_SECRET}") }`);
  const principal = async (kind: string, name: string, extra: Record<string, unknown>) =>
    (
      await ok(A, ADMIN, `mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }`, {
        i: { kind, name, ...extra },
      })
    ).createPrincipal.token as string;
  const workerToken = await principal('WORKER', 'soak-worker', { topics: ['abada:agent'] });
  const humanToken = await principal('HUMAN', 'fiona-finance-lead', { groups: ['finance-leads', 'finance'] });

  const envs: WorkerEnv[] = Array.from({ length: WORKERS }, (_, i) => ({
    engineUrl: i === 0 ? fx.partitionedUrl : i % 2 === 0 ? A : B,
    token: workerToken,
    modelUrl: model.url,
    concurrency: CONCURRENCY,
    lockMs: LOCK_MS,
    logDir,
  }));
  const fleet = new Fleet(envs);
  fleet.start();
  cleanups.unshift(() => fleet.stop(2000));

  // The fault windows are timed from here, when everything is up. Timed from the runner's start, they
  // shrank by the set-up (7 s at load 7, longer when the machine is busier): past 14 s of set-up the
  // smoke's 30 s window closed before its first partition (12–16 s after the faults begin), and the
  // smoke failed on a fault that never came, as it did in `npm test` on a loaded machine.
  const tLoad = Date.now();
  // Integrators: subscribers that disconnect and resume with after:, while listeners are cut.
  const subscribers = await startSubscribers({
    urls: [A, B],
    adminToken: ADMIN,
    databaseUrl: pgServer.url,
    log,
    until: tLoad + START_SPAN_MS + 10_000,
  });
  const stats = newBotStats();
  const botCtx: BotContext = {
    urls: [A, B],
    humanToken,
    adminToken: ADMIN,
    crm,
    stats,
    cancelShare: 0.12,
    maxRetriesPerTask: 5,
    log,
  };
  const bots = [
    loop('approvals', 400, (r) => approvalPass(botCtx, r), log),
    loop('incidents', 700, (r) => incidentPass(botCtx, r), log),
  ];

  // The load: instances started through both engines, spread over START_SPAN_MS.
  let startFailures = 0;
  const starter = resilientPool(pgServer.url);
  const starting = (async () => {
    for (let n = 0; n < INSTANCES && Date.now() < deadline; n++) {
      const story = storyFor(n);
      const tag = `soak-${n}`;
      const customerId = story === 'soak-triage' ? ['C-42', 'C-7', 'C-99'][n % 3] : 'C-42';
      const v = { customerId, message: `${tag}: my parcel never arrived` };
      for (let i = 0; ; i++) {
        const url = engines[(n + i) % 2].url;
        try {
          const r = await gql(
            url,
            ADMIN,
            `mutation($k: String!, $v: JSON, $b: String) { startProcess(key: $k, variables: $v, businessKey: $b) { id } }`,
            {
              k: story,
              v,
              b: tag,
            },
          );
          if (!r.errors) break;
          throw new Error(JSON.stringify(r.errors));
        } catch (e) {
          // An engine down: try the other — unless the start committed and only its answer was lost
          // (startProcess is not idempotent; the business key tells).
          startFailures++;
          if (i > 20) throw e;
          await sleep(300);
          const had = await query(starter, 'SELECT 1 FROM process_instances WHERE business_key = $1', [tag]);
          if (had.rowCount) break;
        }
      }
      await sleep(START_SPAN_MS / INSTANCES);
    }
    await starter.end();
  })();

  // Faults.
  const faultsUntil = tLoad + START_SPAN_MS + 10_000;
  let targeted = 0;
  const targetedByTool: Record<string, number> = {};
  const restarts = SMOKE
    ? [{ at: 0.45, signal: 'SIGKILL' as const }]
    : [
        { at: 0.3, signal: 'SIGTERM' as const },
        { at: 0.65, signal: 'SIGKILL' as const },
      ];
  const aroundFaults = fx.faults.run({
    t0: tLoad,
    span: START_SPAN_MS,
    until: faultsUntil,
    smoke: SMOKE,
    lockMs: LOCK_MS,
  });
  const engineFaults = (async () => {
    for (const r of restarts) {
      await sleep(Math.max(0, tLoad + START_SPAN_MS * r.at - Date.now()));
      log(`engine B: ${r.signal}, restart on the same port`);
      await engines[1].restart(r.signal, 1500);
      log('engine B: back');
    }
  })();
  const randomKills = (async () => {
    while (Date.now() < faultsUntil) {
      await sleep(rnd(SMOKE ? 4000 : 6000, SMOKE ? 9000 : 14000));
      const slot = Math.floor(Math.random() * WORKERS);
      const id = await fleet.kill(slot);
      if (id) log(`SIGKILL ${id} (random moment)`);
    }
  })();
  const tools = ['send_email', 'create_ticket', 'refund', 'send_email'];
  const targetedKills = (async () => {
    const db = resilientPool(pgServer.url);
    for (let k = 0; Date.now() < faultsUntil; k++) {
      await sleep(rnd(3000, 6000));
      const tool = tools[k % tools.length];
      const mark = crm.calls.length;
      crm.setDelay(tool, 4000, 1);
      const until = Date.now() + 15_000;
      let call: (typeof crm.calls)[number] | undefined;
      while (!call && Date.now() < until) {
        await sleep(100);
        call = crm.calls.slice(mark).find((c) => c.tool === tool);
      }
      crm.setDelay(tool, 0);
      if (!call) continue;
      // Who holds the write? Keyed: the step with that key; keyless: the instance tagged in the subject.
      const held = call.key
        ? await query(
            db,
            `SELECT t.worker_id FROM steps s JOIN external_tasks t ON t.id = s.task_id WHERE s.idempotency_key = $1 AND t.state = 'LEASED'`,
            [call.key],
          )
        : await query(
            db,
            `SELECT t.worker_id FROM external_tasks t JOIN process_instances i ON i.id = t.process_instance_id WHERE t.state = 'LEASED' AND $1 LIKE '%(' || i.business_key || ')%'`,
            [String(call.args.subject ?? '')],
          );
      const workerId = held.rows[0]?.worker_id as string | undefined;
      const slot = workerId ? fleet.slotOf(workerId) : -1;
      if (slot < 0) continue;
      if (!(await fleet.kill(slot))) continue;
      targeted++;
      targetedByTool[tool] = (targetedByTool[tool] ?? 0) + 1;
      log(`SIGKILL ${workerId} between STARTED and COMPLETED of ${tool}`);
    }
    await db.end();
  })();

  await starting;
  await Promise.all([engineFaults, randomKills, targetedKills, aroundFaults]);
  log(`faults over; draining (started ${INSTANCES}, start retries ${startFailures})`);

  // Drain: wait until every instance has ended (or the hard cap).
  const probe = resilientPool(pgServer.url);
  for (;;) {
    const r = await query<{ n: number }>(
      probe,
      `SELECT count(*)::int AS n FROM process_instances WHERE state IN ('ACTIVE', 'SUSPENDED')`,
    );
    if (r.rows[0].n === 0) break;
    if (Date.now() > deadline) {
      log(`hard cap reached with ${r.rows[0].n} instances running`);
      break;
    }
    await sleep(1000);
  }
  await probe.end();

  for (const b of bots) await b.stop();
  await fleet.stop();
  const subscriberRow = await subscribers.finish();
  const { rows, figures } = await runChecks({
    databaseUrl: pgServer.url,
    engineUrl: A,
    adminToken: ADMIN,
    crm,
    modelCalls: model.callCount,
    kills: fleet.kills,
    concurrency: CONCURRENCY,
    engineRestarts: engines[1].restarts,
    expectedInstances: INSTANCES,
    logDir,
    // The CRM secret, the worker token, and text that only the prompts carry.
    secrets: [CRM_SECRET, workerToken, 'look the customer up', 'refund a lost parcel if it is due'],
  });
  rows.splice(2, 0, {
    check: 'people',
    figure: `approved ${stats.approved}, rejected ${stats.rejected}, cancelled while waiting ${stats.cancelledWaiting}, second decisions ${stats.secondDecisions} (refused ${stats.secondDecisionRefused}), unknown outcomes resolved ${stats.unknownResolvedHappened} happened / ${stats.unknownResolvedNotHappened} not (left open by a pass while the call was under ${SETTLE_MS / 1000} s old: ${stats.unknownDeferred}), task retries ${stats.taskRetries}, bot errors ${stats.errors}`,
    violations: stats.secondDecisionWrong + stats.errors,
  });
  rows.push(subscriberRow);
  rows[1].figure += `, of which ${targeted} mid-write ${JSON.stringify(targetedByTool)}; ${fx.faults.figure()}`;
  const seconds = Math.round((Date.now() - t0) / 1000);
  const violations = rows.reduce((a, r) => a + r.violations, 0);
  const table = printTable(rows);
  process.stdout.write(`\nAbada soak: ${INSTANCES} instances, ${seconds} s\n${table}\n`);
  const json = {
    instances: INSTANCES,
    seconds,
    smoke: SMOKE,
    violations,
    rows,
    figures: {
      ...figures,
      ...stats,
      kills: fleet.kills,
      targetedKills: targeted,
      engineRestarts: engines[1].restarts,
      ...fx.faults.counts,
    },
  };
  process.stdout.write(`SOAK_JSON ${JSON.stringify(json)}\n`);
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(json, null, 2));
  process.stdout.write(violations === 0 ? 'soak: no violation\n' : `soak: ${violations} violations\n`);

  await Promise.allSettled(engines.map((e) => e.stop()));
  await Promise.allSettled([crm.close(), model.close(), fx.faults.close()]);
  await pgServer.close();
  if (violations === 0 && !process.env.SOAK_KEEP) rmSync(dir, { recursive: true, force: true });
  return violations === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  async (e) => {
    process.stderr.write(`soak failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    for (const c of cleanups) await c().catch(() => {});
    process.exit(2);
  },
);

/**
 * An engine slot on a free port. A port found free can be taken by another process before the engine
 * binds it (tests run in parallel): then the engine exits at once, and the slot is tried on another port.
 */
async function startSlot(name: string, env: (port: number) => Record<string, string>): Promise<EngineSlot> {
  for (let i = 0; ; i++) {
    const port = await freePort();
    const slot = new EngineSlot(name, `http://127.0.0.1:${port}`, env(port));
    try {
      await slot.start();
      return slot;
    } catch (e) {
      if (i >= 4) throw e;
    }
  }
}
