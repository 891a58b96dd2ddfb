/** The bench's output: the tables on stdout, the JSON under bench/results/, PostgreSQL's own statistics. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type pg from 'pg';
import { results, rows, SECONDS, SMOKE } from './context.js';

export async function printPgStats(pool: pg.Pool) {
  const { rows: top } = await pool.query(
    `SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
       round(mean_plan_time::numeric, 3) AS plan_ms,
       left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
     FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`,
  );
  console.log('\npg_stat_statements (top 25 by total time)');
  for (const r of top)
    console.log(
      `${String(r.total_ms).padStart(8)} ms ${String(r.calls).padStart(8)}× ${String(r.mean_ms).padStart(8)} ms (plan ${r.plan_ms} ms)  ${r.query}`,
    );
  const { rows: fns } = await pool.query(
    `SELECT funcname, calls, round(total_time::numeric, 0) AS total_ms, round(self_time::numeric, 0) AS self_ms
     FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 10`,
  );
  for (const r of fns)
    console.log(`fn ${r.funcname}: ${r.calls}× total ${r.total_ms} ms self ${r.self_ms} ms`);
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
  const f = results.fanOut as {
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
  results.table = rows;
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/${SMOKE ? 'smoke' : new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(results, null, 2));
  console.log(`\nwritten ${file}`);
}
