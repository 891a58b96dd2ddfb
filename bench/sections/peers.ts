/**
 * The agent peers in the same run: what users would pick instead of Abada to make an agent durable —
 * DBOS Transact (a workflow of five steps) and LangGraph (five nodes checkpointed by `PostgresSaver`,
 * its default `async` durability and `sync`). Each runs the agent task of bench/peers/agent.ts, 16 in
 * flight on a pool of 16 connections, in a child process of its own against a database of its own on
 * the bench's PostgreSQL, after Abada's sections, in rounds alternating with Abada's whole agents
 * (sections/agents.ts). Per task: CPU of the peer's process and of PostgreSQL
 * (all its processes), commits and rows inserted in its database, WAL bytes (bench/pgstat.ts).
 *
 * By design DBOS commits about 22 times per task (7 writes: the workflow's status, input and output,
 * one operation_outputs row per step; the rest reads around them) and inserts 8 rows (workflow_status,
 * workflow_input, workflow_output, 5 × operation_outputs); LangGraph about 14 commits and 36 rows (a
 * checkpoint per super-step with its channel blobs, and each node's writes). Figures far from these
 * mean a peer is set up wrongly, so they are printed next to the measured ones. An autovacuum pass on a
 * peer's young tables can land in a short window (its transactions count as the database's commits).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import pg from 'pg';
import { CpuMeter } from '../lib.js';
import type { FromChild, ToChild } from '../peers/child.js';
import { DbCounters } from '../pgstat.js';
import type { AgentWindows } from './agents.js';
import type { AgentPeerResult, AgentWindow } from './comparison.js';
import { cpuOf, results, SECONDS, SMOKE } from './context.js';

/** The window's key in `results.peers`, its mode for the child, and the design's figures. */
interface Window {
  key: string;
  mode: string;
  expected: { commits: number; rows: number };
}

const PEERS: { peer: string; file: string; database: string; windows: Window[] }[] = [
  {
    peer: 'DBOS Transact',
    file: 'bench/peers/dbos-proc.ts',
    database: 'bench_dbos',
    windows: [{ key: 'dbos', mode: 'workflow', expected: { commits: 22, rows: 8 } }],
  },
  {
    peer: 'LangGraph',
    file: 'bench/peers/langgraph-proc.ts',
    database: 'bench_langgraph',
    windows: [
      { key: 'langgraph', mode: 'async', expected: { commits: 14, rows: 36 } },
      { key: 'langgraphSync', mode: 'sync', expected: { commits: 14, rows: 36 } },
    ],
  },
];

/**
 * Tasks run unmeasured in each mode as the children start, and again right before each window
 * (connections opened, statements and code warmed; in the smoke, the start's only).
 */
const WARM_TASKS = SMOKE ? 16 : 320;
const WARM_AGAIN = SMOKE ? 0 : WARM_TASKS;

/** Rounds of windows: Abada's, then each peer's, so the machine's drift falls on both sides of a ratio. */
const ROUNDS = SMOKE ? 1 : 3;

/**
 * Runs every peer on the bench's server (`url`: the bench's own database on it), alternating with
 * Abada's whole agents (`abada`): ROUNDS rounds of one window each. Each figure is the round of median
 * total CPU; `peerRatios` the median over rounds of Abada's CPU per agent over the peer's per task.
 */
export async function agentPeers(url: string, abada: AgentWindows) {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const procs: PeerProc[] = [];
  const rounds: { abada: AgentWindow; peers: Record<string, AgentPeerResult> }[] = [];
  try {
    for (const p of PEERS) await admin.query(`CREATE DATABASE ${p.database}`);
    // the children start (import, connect, migrate) side by side; their windows run one after another
    for (const p of PEERS) {
      const dbUrl = new URL(url);
      dbUrl.pathname = `/${p.database}`;
      procs.push(await PeerProc.start(p, dbUrl.toString()));
    }
    await Promise.all(procs.map((x) => x.ready));
    for (let r = 0; r < ROUNDS; r++) {
      const round = { abada: await abada.measure(), peers: {} as Record<string, AgentPeerResult> };
      for (const x of procs) for (const w of x.peer.windows) round.peers[w.key] = await x.measure(w);
      rounds.push(round);
    }
    await Promise.all(procs.map((x) => x.exit()));
  } finally {
    await admin.end();
    for (const x of procs) await x.close();
  }
  const mid = <T>(xs: T[], by: (x: T) => number) =>
    [...xs].sort((a, b) => by(a) - by(b))[(xs.length - 1) >> 1];
  const agent = mid(
    rounds.map((r) => r.abada),
    (a) => a.cpuMsPerAgent.total,
  );
  results.abadaAgents = {
    ...agent,
    roundsTotal: rounds.map((r) => r.abada.cpuMsPerAgent.total),
    emptyFetches: abada.emptyFetches,
  };
  results.cpuMsPerAgentAllIn = agent.cpuMsPerAgent.total;
  results.commitsPerAgent = agent.counts.commits;
  results.rowsPerAgent = agent.counts.rows;
  results.walBytesPerAgent = agent.counts.walBytes;
  const peers: Record<string, AgentPeerResult & { roundsTotal: number[] }> = {};
  for (const key of Object.keys(rounds[0].peers)) {
    const all = rounds.map((r) => r.peers[key]);
    peers[key] = {
      ...mid(all, (p) => p.cpuMsPerTask.total),
      roundsTotal: all.map((p) => p.cpuMsPerTask.total),
    };
  }
  results.peers = peers;
  const ratio = (key: string) =>
    mid(
      rounds.map((r) => r.abada.cpuMsPerAgent.total / r.peers[key].cpuMsPerTask.total),
      (x) => x,
    );
  results.peerRatios = { dbos: ratio('dbos'), langgraph: ratio('langgraph') };
}

type PeerSpec = (typeof PEERS)[number];

/** A peer's child process, driven over its IPC channel (bench/peers/child.ts), and its database's observer. */
class PeerProc {
  private constructor(
    readonly peer: PeerSpec,
    private readonly child: ChildProcess,
    private readonly observer: DbCounters,
    /** resolves when the child has set up (imported, connected, migrated) */
    readonly ready: Promise<unknown>,
  ) {}

  static async start(peer: PeerSpec, dbUrl: string): Promise<PeerProc> {
    const child = spawn(process.execPath, ['--import', 'tsx', peer.file], {
      env: {
        ...process.env,
        PEER_DATABASE_URL: dbUrl,
        PEER_MODES: peer.windows.map((w) => w.mode).join(','),
        PEER_WARM_TASKS: String(WARM_TASKS),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = answer(child, peer.file, 'ready');
    // (a failure before the bench awaits it is reported there, not as an unhandled rejection)
    ready.catch(() => {});
    const observer = await DbCounters.open(dbUrl).catch((e) => {
      child.kill('SIGKILL');
      throw e;
    });
    return new PeerProc(peer, child, observer, ready);
  }

  /** One window: warm-up, then the timed run between two readings of the database's counters. */
  async measure(w: Window): Promise<AgentPeerResult> {
    const { child, peer, observer } = this;
    send(child, { kind: 'window', mode: w.mode, seconds: SECONDS, warmTasks: WARM_AGAIN });
    await answer(child, peer.file, 'warmed');
    const meter = new CpuMeter([child.pid!], cpuOf.pgDir);
    const { result, counts: c } = await observer.around(async () => {
      meter.start();
      send(child, { kind: 'go' });
      const done = await answer(child, peer.file, 'done');
      return { result: { done, cpu: meter.stop() }, units: done.tasks, flushed: done.flushed };
    });
    const { done, cpu } = result;
    const n = done.tasks;
    return {
      peer: peer.peer,
      mode: w.mode,
      tasks: n,
      tasksPerSec: n / done.seconds,
      cpuMsPerTask: {
        process: cpu.engines / n,
        postgres: cpu.postgres / n,
        total: (cpu.engines + cpu.postgres) / n,
      },
      commitsPerTask: c.commits,
      rowsPerTask: c.rows,
      rowsCountedPerTask: c.rowsCounted,
      walBytesPerTask: c.walBytes,
      expected: w.expected,
    };
  }

  /** Asks the child to close its library and pool, and waits for it to end. */
  async exit() {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    send(this.child, { kind: 'exit' });
    await exited;
  }

  async close() {
    await this.observer.close();
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

function send(child: ChildProcess, m: ToChild) {
  child.send(m);
}

/** The child's next message, which must be `kind`; its error or its exit rejects. */
function answer<K extends FromChild['kind']>(
  child: ChildProcess,
  file: string,
  kind: K,
): Promise<Extract<FromChild, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${file} exited (${code}) before '${kind}'`));
    child.once('exit', onExit);
    child.once('message', (m: FromChild) => {
      child.off('exit', onExit);
      if (m.kind === kind) resolve(m as Extract<FromChild, { kind: K }>);
      else reject(new Error(`${file}: ${m.kind === 'error' ? m.message : `'${m.kind}' before '${kind}'`}`));
    });
  });
}
