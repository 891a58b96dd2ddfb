/** The soak's processes: engines (bench/lib.ts spawnEngine, respawned on the same port) and workers. */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import path from 'node:path';
import { type EngineProc, spawnEngine } from '../bench/lib.js';
import { createClient } from '../server/client/index.js';

/** The answer to one of the soak's inline selections, read as the soak selected it. */
// biome-ignore lint/suspicious/noExplicitAny: the soak's documents are untyped strings, as the bench's
type Untyped = any;

export const ROOT = path.resolve(import.meta.dirname, '..');

export interface GqlResult<T = Untyped> {
  data: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** A GraphQL call (server/client) that returns errors instead of throwing on them; a network failure still throws. */
export async function gql<T = Untyped>(
  url: string,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GqlResult<T>> {
  const r = await createClient({ url, token, timeoutMs: 15_000 }).execute<T>(query, variables);
  return r as GqlResult<T>;
}

export const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions?.code;

/** One engine slot: a child process on a fixed port, restartable on the same database. */
export class EngineSlot {
  proc: EngineProc | null = null;
  restarts = 0;
  constructor(
    readonly name: string,
    readonly url: string,
    private readonly env: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    this.proc = await spawnEngine(this.env);
  }

  /** Kills the engine (SIGKILL or SIGTERM), waits `downMs`, starts it again on the same port. */
  async restart(signal: 'SIGKILL' | 'SIGTERM', downMs: number): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (proc) {
      const exited = new Promise<void>((r) => {
        if (proc.child.exitCode !== null || proc.child.signalCode !== null) r();
        else proc.child.once('exit', () => r());
      });
      proc.child.kill(signal);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await exited;
    }
    await new Promise((r) => setTimeout(r, downMs));
    for (let i = 0; ; i++) {
      try {
        await this.start();
        break;
      } catch (e) {
        if (i > 10) throw e; // the port may linger a moment
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    this.restarts++;
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
    this.proc = null;
  }
}

export interface WorkerEnv {
  engineUrl: string;
  token: string;
  modelUrl: string;
  concurrency: number;
  lockMs: number;
  logDir: string;
}

export interface WorkerProc {
  id: string;
  engineUrl: string;
  child: ChildProcess;
  exited: Promise<void>;
}

export function spawnWorker(id: string, w: WorkerEnv): WorkerProc {
  const log = openSync(path.join(w.logDir, `${id}.log`), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/worker/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ABADA_URL: w.engineUrl,
      ABADA_TOKEN: w.token,
      ABADA_WORKER_ID: id,
      ABADA_WORKER_CONCURRENCY: String(w.concurrency),
      ABADA_WORKER_LOCK_MS: String(w.lockMs),
      ABADA_WORKER_POLL_MS: '1000',
      ABADA_WORKER_GRACE_MS: '5000',
      ABADA_MODEL_BASE_URL: w.modelUrl,
      ABADA_MODEL_API_KEY: 'soak-key',
      ABADA_MODEL_TIMEOUT_MS: '20000',
      ABADA_TOOL_TIMEOUT_MS: '20000',
      ABADA_LOG_LEVEL: 'info',
    } as unknown as NodeJS.ProcessEnv,
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { id, engineUrl: w.engineUrl, child, exited };
}

const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** The worker fleet: slot i always runs one process; a killed one is replaced under a new id. */
export class Fleet {
  slots: WorkerProc[] = [];
  kills = 0;
  private gen = 0;
  private readonly replacing = new Set<number>();
  constructor(private readonly envs: WorkerEnv[]) {}

  start(): void {
    this.slots = this.envs.map((e, i) => spawnWorker(this.nextId(i), e));
  }

  private nextId(slot: number): string {
    return `w${slot}-g${this.gen++}`;
  }

  /** SIGKILLs the worker in `slot` and replaces it; null when the slot is already being replaced. */
  async kill(slot: number, downMs = 300): Promise<string | null> {
    const w = this.slots[slot];
    // A random kill and a targeted one may pick the same slot: only one replaces it (else a replacement
    // would be overwritten and outlive the soak).
    if (this.replacing.has(slot)) return null;
    this.replacing.add(slot);
    try {
      return await this.replace(slot, w, downMs);
    } finally {
      this.replacing.delete(slot);
    }
  }

  private async replace(slot: number, w: WorkerProc, downMs: number): Promise<string> {
    if (alive(w.child)) {
      w.child.kill('SIGKILL');
      this.kills++;
    }
    await w.exited;
    await new Promise((r) => setTimeout(r, downMs));
    this.slots[slot] = spawnWorker(this.nextId(slot), this.envs[slot]);
    return w.id;
  }

  slotOf(workerId: string): number {
    return this.slots.findIndex((w) => w.id === workerId && alive(w.child));
  }

  /** SIGTERM to every worker (they finish within their grace time), SIGKILL after `ms`. */
  async stop(ms = 10_000): Promise<void> {
    for (const w of this.slots) if (alive(w.child)) w.child.kill('SIGTERM');
    const all = Promise.all(this.slots.map((w) => w.exited));
    const t = setTimeout(() => {
      for (const w of this.slots) if (alive(w.child)) w.child.kill('SIGKILL');
    }, ms);
    await all;
    clearTimeout(t);
  }
}
