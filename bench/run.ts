/**
 * `npm run bench`: in ONE run, a raw baseline with `pg` on the same database, then Abada through GraphQL,
 * printed as figures and ratios (and written to bench/results/<time>.json). Loopback only, bounded in
 * time. `--smoke` runs every section tiny (used by `npm test`, which asserts only that it works).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../server/db/client.js';
import { runMigrations } from '../server/db/migrate.js';
import { fanOut } from './fanout.js';
import { type EngineProc, gqlClient, spawnEngine } from './lib.js';
import { flushStats } from './pgstat.js';
import type { Client } from './sections/context.js';
import { backlog, claimThroughput } from './sections/claims.js';
import { cpuOf, crmToolServer, HISTORY, results, SECONDS, SMOKE, want } from './sections/context.js';
import { historyGrowth } from './sections/history.js';
import { journalThroughput } from './sections/journal.js';
import { rawBaselines } from './sections/raw.js';
import { print, printPgStats } from './sections/report.js';
import { agentsInFlight } from './sections/inflight.js';
import { graphileWorkerPeer, peerJobs } from './sections/peer.js';
import { AgentWindows } from './sections/agents.js';
import { apiLayer } from './sections/api.js';
import { agentPeers } from './sections/peers.js';
import { taskThroughput } from './sections/tasks.js';

const ADMIN = 'bench-admin-token';
const KEY = Buffer.alloc(32, 7).toString('base64');

const PROCESS = `${crmToolServer('http://127.0.0.1:9/mcp')}---
kind: Process
key: bench
variables: { n: { type: integer } }
start: agent
nodes:
  - id: agent
    type: agent
    model: gpt-4.1-mini
    prompt: bench
    tools: [crm/get_customer, crm/create_ticket, crm/refund]
    result_variable: out
    next: done
  - { id: done, type: end }
---
kind: Process
key: claim
start: work
nodes:
  - { id: work, type: service, topic: claim, next: done }
  - { id: done, type: end }
`;

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'abada-bench-'));
  chmodSync(dir, 0o755);
  // The run's database is 0.7–6 GB; left behind by every run it filled the disk (and then failed CI).
  // Removed on every exit, a signal or a failure included (BENCH_KEEP_DATA=1 keeps it to look into).
  if (process.env.BENCH_KEEP_DATA !== '1')
    process.on('exit', () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
  // BENCH_PG_STATS=1: PostgreSQL's own view of where its time went (pg_stat_statements), printed at the end.
  const pgStats = process.env.BENCH_PG_STATS === '1';
  // BENCH_EXPLAIN=<ms>: PostgreSQL logs the plan of every statement slower than that (auto_explain).
  const explainMs = process.env.BENCH_EXPLAIN;
  const pgServer = await startEmbeddedPostgres(path.join(dir, 'pg'), {
    log: explainMs ? (line) => process.stderr.write(`${line}\n`) : undefined,
    flags: explainMs
      ? [
          '-c',
          'shared_preload_libraries=auto_explain',
          '-c',
          `auto_explain.log_min_duration=${explainMs}`,
          // BENCH_EXPLAIN_ANALYZE=1: with each node's actual rows and time (slows what it measures)
          ...(process.env.BENCH_EXPLAIN_ANALYZE === '1' ? ['-c', 'auto_explain.log_analyze=on'] : []),
        ]
      : pgStats
        ? [
            '-c',
            'shared_preload_libraries=pg_stat_statements',
            '-c',
            'pg_stat_statements.track=all',
            '-c',
            'pg_stat_statements.track_planning=on',
            '-c',
            'track_functions=all',
          ]
        : [],
  });
  const url = pgServer.url;
  cpuOf.pgDir = path.join(dir, 'pg');
  await runMigrations(url);
  const pool = new pg.Pool({ connectionString: url, max: 40 });
  // an idle connection that fails is replaced by the pool; say so instead of dying on the event
  pool.on('error', (e) => console.error(`bench pool: idle connection failed: ${e.message}`));
  if (pgStats) await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const engines: EngineProc[] = [];
  try {
    await rawBaselines(pool);
    const env = {
      DATABASE_URL: url,
      ABADA_ENCRYPTION_KEY: KEY,
      ABADA_ADMIN_TOKEN: ADMIN,
      ABADA_HEARTBEAT_DEBOUNCE_MS: '5000',
      HOST: '127.0.0.1',
    };
    engines.push(await spawnEngine(env));
    engines.push(await spawnEngine(env));
    cpuOf.enginePids = engines.map((e) => e.child.pid!);
    const admin = gqlClient(engines[0].url, ADMIN);
    await admin(`mutation($s: String!) { deploy(source: $s) { definitions { id } } }`, { s: PROCESS });
    const workerToken = (
      await admin(
        `mutation { createPrincipal(input: {kind: WORKER, name: "bench-worker", topics: ["abada:agent", "claim", "backlog"]}) { token } }`,
      )
    ).createPrincipal.token as string;
    const worker = gqlClient(engines[0].url, workerToken);
    if (HISTORY) await historyGrowth(pool, admin, worker);
    else await sections(pool, url, admin, worker, engines);
    if (pgStats) await printPgStats(pool);
  } finally {
    await Promise.all(engines.map((e) => e.stop()));
    await pool.end();
    await pgServer.stop();
  }
  print();
}

/** The default run's sections (BENCH_ONLY picks some). */
async function sections(pool: pg.Pool, url: string, admin: Client, worker: Client, engines: EngineProc[]) {
  if (want('journal') || want('batch')) await journalThroughput(pool, admin, worker);
  if (want('tasks')) await taskThroughput(pool, admin, worker);
  if (want('peer')) await graphileWorkerPeer(url, peerJobs());
  if (want('claims')) await claimThroughput(pool, worker);
  if (want('backlog')) await backlog(pool, worker);
  results.fanOut = want('fanout')
    ? await fanOut({ engines, admin, worker, smoke: SMOKE, seconds: SECONDS })
    : [];
  if (want('inflight')) await agentsInFlight(pool, admin, engines[0].url);
  if (want('api')) await apiLayer(url, admin, KEY, ADMIN);
  // after Abada's sections, on the same server: the peers an agent's author would pick instead
  if (want('peers')) {
    // every connection on the bench's database (the engines' pools and the bench's) flushes its statistics
    const flush = async () =>
      (await Promise.all([...engines.map((e) => e.flushStats()), flushStats(pool)])).reduce(
        (a, b) => a + b,
        0,
      );
    await agentPeers(url, new AgentWindows(admin, worker, { url, flush }));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
