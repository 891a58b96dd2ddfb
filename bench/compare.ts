/**
 * Compares bench runs: engine + PostgreSQL CPU per unit of every figure, as the median of each group of
 * runs, and the change from the first group to the second. Runs taken alternately (before, after,
 * before, …) in one session cancel out most of this machine's drift.
 *
 *   npx tsx bench/compare.ts before1.json before2.json before3.json -- after1.json after2.json after3.json
 */
import { readFileSync } from 'node:fs';

interface Row {
  figure: string;
  abada: number;
  unit: string;
  cpuPerUnit?: { engines: number; postgres: number; bench: number } | null;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

interface Run {
  table: Row[];
  cpuMsPerTask?: number;
  cpuMsPerTaskUnbatched?: number;
  agentsPerCore?: number;
  inFlight?: {
    inFlight: number;
    tasksPerSec: number;
    ratio: number;
    stepGap: { p50: number; p99: number };
  }[];
  peer?: { mode: string; jobsPerSec: number; cpuPerJob: { postgres: number; library: number } }[];
}

/** The figures of issue 18 beside the table: headline, agents in flight, the peer (absent in older runs). */
function extras(run: Run): Map<string, number> {
  const out = new Map<string, number>();
  if (run.cpuMsPerTask !== undefined)
    out.set('engine + PostgreSQL CPU ms per 002-shaped task', run.cpuMsPerTask);
  if (run.cpuMsPerTaskUnbatched !== undefined)
    out.set('the same, each task its own journal requests', run.cpuMsPerTaskUnbatched);
  if (run.agentsPerCore !== undefined)
    out.set('agents per core (3 s of model time per task)', run.agentsPerCore);
  for (const x of run.inFlight ?? []) {
    out.set(`in flight ${x.inFlight}: tasks/s ÷ ideal`, x.ratio);
    out.set(`in flight ${x.inFlight}: added latency per step p50 ms`, x.stepGap.p50);
    out.set(`in flight ${x.inFlight}: added latency per step p99 ms`, x.stepGap.p99);
  }
  for (const p of run.peer ?? []) {
    out.set(`graphile-worker ${p.mode}: jobs/s`, p.jobsPerSec);
    out.set(`graphile-worker ${p.mode}: CPU ms per job`, p.cpuPerJob.postgres + p.cpuPerJob.library);
  }
  return out;
}

function loadExtras(files: string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const f of files) {
    for (const [k, v] of extras(JSON.parse(readFileSync(f, 'utf8')) as Run)) {
      // a figure with nothing measured (no task finished in the window) is null in the JSON
      if (typeof v === 'number' && Number.isFinite(v)) out.set(k, [...(out.get(k) ?? []), v]);
    }
  }
  return out;
}

function load(files: string[]): Map<string, { cpu: number[]; rate: number[] }> {
  const out = new Map<string, { cpu: number[]; rate: number[] }>();
  for (const f of files) {
    const { table } = JSON.parse(readFileSync(f, 'utf8')) as Run;
    for (const r of table) {
      if (!r.cpuPerUnit) continue;
      const e = out.get(r.figure) ?? { cpu: [], rate: [] };
      e.cpu.push(r.cpuPerUnit.engines + r.cpuPerUnit.postgres);
      e.rate.push(r.abada);
      out.set(r.figure, e);
    }
  }
  return out;
}

const args = process.argv.slice(2);
const cut = args.indexOf('--');
if (cut < 1 || cut === args.length - 1) {
  console.error('usage: bench/compare.ts <before.json …> -- <after.json …>');
  process.exit(2);
}
const before = load(args.slice(0, cut));
const after = load(args.slice(cut + 1));
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(3));
console.log('| figure | CPU ms per unit, before | after | change | rate before | after |');
console.log('|---|---|---|---|---|---|');
for (const [figure, b] of before) {
  const a = after.get(figure);
  if (!a || figure.startsWith('raw:')) continue;
  const cb = median(b.cpu);
  const ca = median(a.cpu);
  const change = ((ca - cb) / cb) * 100;
  console.log(
    `| ${figure} | ${fmt(cb)} | ${fmt(ca)} | ${change >= 0 ? '+' : ''}${change.toFixed(1)} % | ${fmt(median(b.rate))} | ${fmt(median(a.rate))} |`,
  );
}

const beforeExtras = loadExtras(args.slice(0, cut));
const afterExtras = loadExtras(args.slice(cut + 1));
if (afterExtras.size > 0) {
  console.log('\n| figure (medians) | before | after |\n|---|---|---|');
  for (const [figure, a] of afterExtras) {
    const b = beforeExtras.get(figure);
    console.log(`| ${figure} | ${b ? fmt(median(b)) : '—'} | ${fmt(median(a))} |`);
  }
}
