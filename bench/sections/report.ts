/** The bench's output: the tables on stdout, the JSON under bench/results/, PostgreSQL's own statistics. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type pg from 'pg';
import { results, rows, SECONDS, SMOKE } from './context.js';
import type { InFlightResult } from './inflight.js';
import type { PeerResult } from './peer.js';
import type { AgentPeerResult, AgentWindow } from './comparison.js';

export async function printPgStats(pool: pg.Pool, window?: { title: string; units: number; unit: string }) {
  const per = window ? `, per ${window.unit} (${window.units.toFixed(0)} ${window.unit}s)` : '';
  const { rows: top } = await pool.query(
    `SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
       round(mean_plan_time::numeric, 3) AS plan_ms, plans, total_exec_time + total_plan_time AS all_ms,
       left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
     FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`,
  );
  console.log(`\npg_stat_statements${window ? ` of ${window.title}` : ''} (top 25 by total time${per})`);
  for (const r of top) {
    const unitShare = window
      ? `${(r.calls / window.units).toFixed(2).padStart(6)}× ${(r.all_ms / window.units).toFixed(3)} ms  `
      : '';
    console.log(
      `${unitShare}${String(r.total_ms).padStart(8)} ms ${String(r.calls).padStart(8)}× ${String(r.mean_ms).padStart(8)} ms (${r.plans} plans of ${r.plan_ms} ms)  ${r.query}`,
    );
  }
  const { rows: fns } = await pool.query(
    `SELECT funcname, calls, round(total_time::numeric, 0) AS total_ms, round(self_time::numeric, 0) AS self_ms
     FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 10`,
  );
  for (const r of fns)
    console.log(`fn ${r.funcname}: ${r.calls}× total ${r.total_ms} ms self ${r.self_ms} ms`);
}

/** BENCH_PG_STATS=1: PostgreSQL's statistics start again here (for one window's own figures). */
export async function resetPgStats(pool: pg.Pool) {
  if (process.env.BENCH_PG_STATS !== '1') return false;
  await pool.query('SELECT pg_stat_statements_reset(), pg_stat_reset()');
  return true;
}

export function print() {
  const fmt = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(2)) : '—');
  console.log(
    `\nAbada bench${SMOKE ? ' (smoke)' : ''} — ${SECONDS}s per measurement, ${os.cpus().length} cores\n`,
  );
  console.log(`| figure | Abada | baseline | ratio | note |\n|---|---|---|---|---|`);
  for (const r of rows)
    console.log(
      `| ${r.figure} | ${fmt(r.abada)} ${r.unit} | ${fmt(r.baseline)} | ${r.ratio.toFixed(2)} | ${r.note ?? ''} |`,
    );
  console.log(
    `\nCPU ms per unit of each figure (commit, step, task claimed), by process group\n\n| figure | engines | PostgreSQL | bench client | total |\n|---|---|---|---|---|`,
  );
  for (const r of rows) {
    const c = r.cpuPerUnit;
    if (c)
      console.log(
        `| ${r.figure} | ${c.engines.toFixed(3)} | ${c.postgres.toFixed(3)} | ${c.bench.toFixed(3)} | ${(c.engines + c.postgres + c.bench).toFixed(3)} |`,
      );
  }
  const f = (results.fanOut ?? []) as {
    subscribers: number;
    p50: number;
    p99: number;
    received: number;
    expected: number;
    engineRssMb: number[];
    engineCpuMs: number[];
  }[];
  console.log(
    `\n| subscribers | proposal → approvalOpened p50 | p99 | received/expected | engine RSS MB | engine CPU ms |\n|---|---|---|---|---|---|`,
  );
  for (const x of f)
    console.log(
      `| ${x.subscribers} | ${fmt(x.p50)} ms | ${fmt(x.p99)} ms | ${x.received}/${x.expected} | ${x.engineRssMb.map((v) => v.toFixed(0)).join(' / ')} | ${x.engineCpuMs.join(' / ')} |`,
    );
  printAgents(fmt);
  printApiLayer(fmt);
  printAgentPeers(fmt);
  printHistory(fmt);
  results.table = rows;
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/${SMOKE ? 'smoke' : new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(results, null, 2));
  console.log(`\nwritten ${file}`);
}

/** The headline (CPU per task, agents per core), the agents in flight and the peer queue. */
function printAgents(fmt: (n: number) => string) {
  const perTask = results.cpuMsPerTask as number | undefined;
  if (perTask !== undefined) {
    const split = results.cpuMsPerTaskSplit as { engines: number; postgres: number };
    console.log(
      `\nHeadline: engine + PostgreSQL CPU per 002-shaped task (as the Agent Worker journals it): ${perTask.toFixed(2)} ms (engine ${split.engines.toFixed(2)}, PostgreSQL ${split.postgres.toFixed(2)}) → ${fmt(results.agentsPerCore as number)} agents per core at 3 s of model time per task`,
    );
    const overClient = results.cpuPerTaskOverClient as number | undefined;
    if (overClient !== undefined)
      console.log(
        `  (${overClient.toFixed(2)}× the bench client's own CPU per task in the same window: compare runs by this when the machine's speed drifts)`,
      );
    const paired = results.cpuMsPerTaskPaired as number | undefined;
    if (paired !== undefined)
      console.log(
        `  (the same task journaled in the earlier 8-request shape, same run: ${paired.toFixed(2)} ms — ${(perTask / paired).toFixed(2)}×)`,
      );
    const unbatched = results.cpuMsPerTaskUnbatched as number | undefined;
    const b = results.journalBatching as { callsPerRequest: number } | undefined;
    if (unbatched !== undefined && b)
      console.log(
        `  (each task with its own journal requests, same run: ${unbatched.toFixed(2)} ms — ${(perTask / unbatched).toFixed(2)}×; batched: ${b.callsPerRequest.toFixed(1)} journal calls per request)`,
      );
    const floor = results.rawTaskFloor as { postgres: number; client: number } | undefined;
    if (floor)
      console.log(
        `  (the floor: the same task's rows written by hand with pg, same run: PostgreSQL ${floor.postgres.toFixed(2)} ms + client ${floor.client.toFixed(2)} ms per task; the headline's PostgreSQL share is ${(split.postgres / floor.postgres).toFixed(2)}× the floor's, the whole headline ${(perTask / floor.postgres).toFixed(2)}×)`,
      );
  }
  const inFlight = (results.inFlight ?? []) as InFlightResult[];
  if (inFlight.length) {
    console.log(
      `\nAgents in flight (real Agent Worker processes; CRM ${results.toolMs} ms, model ${results.modelMs} ms)\n\n| in flight | tasks/s | ideal | ratio | added latency per step p50 / p99 | worker RSS MB | engine RSS MB | CPU ms per task: engine / PostgreSQL / workers / doubles |\n|---|---|---|---|---|---|---|---|`,
    );
    for (const x of inFlight) {
      const c = x.cpuPerTask;
      console.log(
        `| ${x.inFlight} | ${fmt(x.tasksPerSec)} | ${fmt(x.idealTasksPerSec)} | ${x.ratio.toFixed(2)} | ${fmt(x.stepGap.p50)} / ${fmt(x.stepGap.p99)} ms (${x.stepGap.n} steps; before a tool call ${fmt(x.stepGapBefore.tool.p50)} / ${fmt(x.stepGapBefore.tool.p99)}, before a model call ${fmt(x.stepGapBefore.model.p50)} / ${fmt(x.stepGapBefore.model.p99)}) | ${x.workerRssMb.map((v) => v.toFixed(0)).join(' / ')} | ${x.engineRssMb.map((v) => v.toFixed(0)).join(' / ')} | ${fmt(c.engines)} / ${fmt(c.postgres)} / ${fmt(c.workers)} / ${fmt(c.doubles)} |`,
      );
    }
    console.log(
      `  journal calls per request, workers → engine A (its /metrics): ${inFlight.map((x) => `N = ${x.inFlight}: ${x.journalCallsPerRequest?.toFixed(2)}`).join(', ')}`,
    );
  }
  const peer = (results.peer ?? []) as PeerResult[];
  if (peer.length) {
    const tasks = rows.find((r) => r.figure.includes('as the Agent Worker journals it'));
    console.log(
      `\nThe peer: graphile-worker on the same database (add + complete), next to Abada's 002-shaped task\n\n| | per second | CPU ms per unit: PostgreSQL | engine / library | total |\n|---|---|---|---|---|`,
    );
    if (tasks?.cpuPerUnit) {
      const c = tasks.cpuPerUnit;
      console.log(
        `| Abada, 002-shaped task as the Agent Worker journals it (7 commits) | ${fmt(tasks.abada / 7)} tasks/s | ${fmt(c.postgres * 7)} | ${fmt(c.engines * 7)} | ${fmt((c.postgres + c.engines) * 7)} |`,
      );
    }
    for (const p of peer)
      console.log(
        `| graphile-worker, ${p.mode}, ${p.jobs} jobs | ${fmt(p.jobsPerSec)} jobs/s | ${fmt(p.cpuPerJob.postgres)} | ${fmt(p.cpuPerJob.library)} | ${fmt(p.cpuPerJob.postgres + p.cpuPerJob.library)} |`,
      );
  }
}

/** The agent peers (bench/sections/peers.ts) next to Abada's whole agents (bench/sections/agents.ts). */
/** The API layer's cost per agent (sections/api.ts). */
function printApiLayer(fmt: (n: number) => string) {
  const a = results.apiLayer as
    | { agents: number; cpuMsPerAgentOverApi: number; cpuMsPerAgentDirect: number; layerUsPerRequest: number }
    | undefined;
  if (!a) return;
  console.log(
    `\nAPI layer: a whole agent in one process (engine and client), ${a.agents} agents a window: ${fmt(a.cpuMsPerAgentOverApi)} ms of CPU over GraphQL and HTTP, ${fmt(a.cpuMsPerAgentDirect)} ms with the engine's commands called directly; ${fmt(a.layerUsPerRequest)} µs a request`,
  );
}

function printAgentPeers(fmt: (n: number) => string) {
  const peers = results.peers as Record<string, AgentPeerResult & { roundsTotal: number[] }> | undefined;
  if (!peers) return;
  const count = (measured: number, counted: number, expected?: number) =>
    `${fmt(measured)} (${Number.isNaN(counted) ? '—' : fmt(counted)}${expected === undefined ? '' : `; ~${expected}`})`;
  console.log(
    `\nAgent peers: the 5-step agent task (model, read, model, write, model; stubs in process), 16 in flight, pools of 16, each peer in a process and database of its own on the same PostgreSQL\n\n| | tasks/s | CPU ms per task: process / PostgreSQL / total | commits per task | rows per task (counted; by design) | WAL bytes per task |\n|---|---|---|---|---|---|`,
  );
  const agent = results.abadaAgents as (AgentWindow & { roundsTotal: number[] }) | undefined;
  const rounds = (xs: number[]) => (xs.length > 1 ? `; rounds ${xs.map(fmt).join(', ')}` : '');
  if (agent) {
    const c = agent.cpuMsPerAgent;
    console.log(
      `| Abada, whole agents: start + task as the Agent Worker journals it, engines and client (${agent.agents} agents${rounds(agent.roundsTotal)}) | — | ${fmt(c.process)} (engines ${fmt(c.engines)}, client ${fmt(c.client)}) / ${fmt(c.postgres)} / ${fmt(c.total)} | ${fmt(agent.counts.commits)} | ${count(agent.counts.rows, agent.counts.rowsCounted)} | ${fmt(agent.counts.walBytes)} |`,
    );
  }
  for (const p of Object.values(peers)) {
    const c = p.cpuMsPerTask;
    console.log(
      `| ${p.peer}, ${p.mode} (${p.tasks} tasks${rounds(p.roundsTotal)}) | ${fmt(p.tasksPerSec)} | ${fmt(c.process)} / ${fmt(c.postgres)} / ${fmt(c.total)} | ${fmt(p.commitsPerTask)} (~${p.expected.commits}) | ${count(p.rowsPerTask, p.rowsCountedPerTask, p.expected.rows)} | ${fmt(p.walBytesPerTask)} |`,
    );
  }
  const ratios = results.peerRatios as { dbos: number; langgraph: number } | undefined;
  if (ratios)
    console.log(
      `  Abada's CPU per agent over the peer's per task, median of the rounds' ratios: DBOS ${ratios.dbos.toFixed(2)}×, LangGraph ${ratios.langgraph.toFixed(2)}×`,
    );
}

/** The opt-in history-growth section (`--history`). */
function printHistory(fmt: (n: number) => string) {
  const h = results.history as
    | {
        instances: number;
        historyRows: number;
        historyBytes: number;
        generatedSeconds: number;
        journalStepCpuRatio: number;
        claimCpuRatio: number;
        verifyAuditMs: { p50: number; max: number; n: number };
        empty: { journal: number; claim: number };
        full: { journal: number; claim: number };
      }
    | undefined;
  if (!h) return;
  console.log(
    `\nHistory growth: ${h.instances} finished instances, ${h.historyRows} history rows (${fmt(h.historyBytes / 2 ** 20)} MB with indexes, ${fmt(h.historyBytes / h.historyRows)} bytes a row), generated in ${fmt(h.generatedSeconds)} s\n\n| engine + PostgreSQL CPU ms | empty database | with the history | ratio |\n|---|---|---|---|\n| per journalStep commit | ${h.empty.journal.toFixed(3)} | ${h.full.journal.toFixed(3)} | ${h.journalStepCpuRatio.toFixed(2)} |\n| per task claimed (maxTasks 50) | ${h.empty.claim.toFixed(3)} | ${h.full.claim.toFixed(3)} | ${h.claimCpuRatio.toFixed(2)} |\n\nverifyAudit of one old instance through GraphQL: p50 ${fmt(h.verifyAuditMs.p50)} ms, slowest of ${h.verifyAuditMs.n} ${fmt(h.verifyAuditMs.max)} ms`,
  );
}
