/** The bench's smoke run: every section works end to end. It asserts no timing (machines are noisy). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('npm run bench (smoke)', () => {
  it('measures every figure against its baseline and writes the JSON', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('journalStep commits/s');
    const json = JSON.parse(readFileSync('bench/results/smoke.json', 'utf8'));
    const figures = json.table.map((x: { figure: string }) => x.figure) as string[];
    for (const section of [
      /^raw: single-row UPDATE/,
      /^raw: claim statement/,
      /^journalStep commits\/s, 16 client/,
      /^journalSteps \(8 per request\)/,
      /^journalSteps \(32 per request\)/,
      /^GraphQL `\{ __typename \}`/,
      /^startProcess, 16 clients/,
      /^002-shaped tasks, 16 loops, end with next start/,
      /^002-shaped tasks, 16 loops, each task its own journal requests/,
      /^002-shaped tasks, 16 loops, as the Agent Worker journals it: 16 tasks on one client/,
      /^raw: the 002-shaped task’s rows by hand/,
      /^fetchAndLock maxTasks 50/,
      /^fetch p50 ms, backlog/,
    ])
      expect(
        figures.some((f) => section.test(f)),
        String(section),
      ).toBe(true);
    expect(figures).toHaveLength(20);
    for (const x of json.table) expect(Number.isFinite(x.ratio), x.figure).toBe(true);
    // where the CPU went is recorded for every throughput figure
    for (const x of json.table.filter((x: { unit: string }) => x.unit !== 'ms')) {
      const c = x.cpuPerUnit ?? { engines: 0, postgres: 0, bench: 0 };
      expect(c.engines + c.postgres + c.bench, x.figure).toBeGreaterThan(0);
    }
    // the headline: engine + PostgreSQL CPU per 002-shaped task and the agents per core it implies
    expect(json.cpuMsPerTask).toBeGreaterThan(0);
    expect(json.agentsPerCore).toBeCloseTo(3000 / json.cpuMsPerTask, 6);
    // and the same over the bench client's own CPU per task in that window (the machine's speed gauge)
    const headline = json.table.find((x: { figure: string }) => x.figure.includes('as the Agent Worker'));
    const c = headline.cpuPerUnit;
    expect(json.cpuPerTaskOverClient).toBeCloseTo((c.engines + c.postgres) / c.bench, 6);
    // the tasks of the headline shared the Agent Worker's client: its journal calls went through the batcher
    expect(json.cpuMsPerTaskUnbatched).toBeGreaterThan(0);
    expect(json.journalBatching.calls).toBeGreaterThan(0);
    expect(json.journalBatching.requests).toBeLessThanOrEqual(json.journalBatching.calls);
    // the floor: the same task's rows written by hand with pg, in the same run — whole tasks done, and
    // PostgreSQL's and the client's CPU per task recomputed from its row (7 commits a task)
    const floor = json.table.find((x: { figure: string }) => x.figure.includes('rows by hand'));
    expect(json.rawTaskFloor.tasksPerSecond).toBeGreaterThan(0);
    expect(json.rawTaskFloor.postgres).toBeCloseTo(floor.cpuPerUnit.postgres * 7, 6);
    expect(json.rawTaskFloor.client).toBeCloseTo(floor.cpuPerUnit.bench * 7, 6);
    // what starting an agent costs (instance + first task), beside it
    expect(json.cpuMsPerStart).toBeGreaterThan(0);
    expect(r.stdout).toContain('agents per core');
    // agents in flight: real Agent Worker processes finished tasks against the doubles (the warm-up waits
    // for 4; how many more fall in the short window depends on the machine, so it is not asserted)
    expect(json.inFlight).toHaveLength(1);
    const inFlight = json.inFlight[0];
    expect(inFlight.completedTotal).toBeGreaterThanOrEqual(4);
    expect(inFlight.idealTasksPerSec).toBeGreaterThan(0);
    expect(inFlight.workerRssMb[0]).toBeGreaterThan(0);
    // the peer queue in the same run, both ways, with CPU per job
    expect(json.peer.map((p: { mode: string }) => p.mode)).toEqual(['unbatched', 'batched']);
    // (CPU comes from /proc in 10 ms ticks: a smoke window of batched jobs may cost PostgreSQL less than one)
    for (const p of json.peer) {
      expect(p.jobsPerSec, p.mode).toBeGreaterThan(0);
      expect(p.cpuPerJob.postgres, p.mode).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(p.cpuPerJob.postgres + p.cpuPerJob.library), p.mode).toBe(true);
    }
    // the agent peers in the same run: whole tasks, CPU per task, and PostgreSQL's own counts of them
    for (const key of ['dbos', 'langgraph', 'langgraphSync']) {
      const p = json.peers[key];
      expect(p.tasks, key).toBeGreaterThan(0);
      expect(Number.isFinite(p.cpuMsPerTask.total) && p.cpuMsPerTask.total > 0, key).toBe(true);
      expect(p.commitsPerTask, key).toBeGreaterThan(0);
      expect(p.rowsPerTask, key).toBeGreaterThan(0);
    }
    // Abada's whole agents in the same rounds (start + task, engines and client), and over each peer's
    // CPU per task; PostgreSQL's counts of an agent: a start's commit and a task's, rows for both
    expect(json.abadaAgents.agents).toBeGreaterThan(0);
    expect(json.cpuMsPerAgentAllIn).toBe(json.abadaAgents.cpuMsPerAgent.total);
    expect(Number.isFinite(json.cpuMsPerAgentAllIn) && json.cpuMsPerAgentAllIn > 0).toBe(true);
    expect(json.commitsPerAgent).toBeGreaterThan(1);
    expect(json.rowsPerAgent).toBeGreaterThan(json.commitsPerAgent);
    for (const key of ['dbos', 'langgraph'])
      expect(Number.isFinite(json.peerRatios[key]) && json.peerRatios[key] > 0, key).toBe(true);
    expect(r.stdout).toContain('Agent peers');
    // the API layer: whole agents over GraphQL and HTTP, and the same engine commands called directly
    expect(json.apiLayer.rounds).toHaveLength(1);
    expect(json.apiLayer.cpuMsPerAgentOverApi).toBeGreaterThan(0);
    expect(json.apiLayer.cpuMsPerAgentDirect).toBeGreaterThan(0);
    expect(r.stdout).toContain('API layer');
    expect(json.fanOut.map((f: { subscribers: number }) => f.subscribers)).toEqual([1, 10]);
    for (const f of json.fanOut) expect(f.received).toBe(f.expected);
  }, 300_000);
});

describe('npm run bench -- --history (smoke)', () => {
  it('generates finished instances with valid chains and measures CPU against the empty database', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--history'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('History growth');
    const { history } = JSON.parse(readFileSync('bench/results/smoke.json', 'utf8'));
    // every generated instance has its 10 rows (plus the rows the measurements journaled)
    expect(history.historyRows).toBeGreaterThanOrEqual(history.instances * 10);
    expect(Number.isFinite(history.journalStepCpuRatio)).toBe(true);
    expect(Number.isFinite(history.claimCpuRatio)).toBe(true);
    // verifyAudit recomputed 20 generated chains and found them valid (the section throws otherwise)
    expect(history.verifyAuditMs.n).toBe(20);
  }, 300_000);
});
