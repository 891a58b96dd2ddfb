/**
 * Test harness for the Agent Worker: the real engine (startTestEngine), the demo CRM (MCP over
 * streamable HTTP, token required) and the scripted model server in-process, and REAL worker processes
 * (server/worker/main.ts, bundled for the run: test/helpers/bundles.ts) that know only the engine URL, a
 * worker token and the model endpoint.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { type CrmServer, startCrmServer } from '../../server/demo/crm-server.js';
import { type ModelServer, type Script, startModelServer } from '../../server/demo/model-server.js';
import { bundled } from '../helpers/bundles.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER, Q, REFUND, SUPPORT_TRIAGE } from '../helpers/fixtures.js';

import { waitFor } from '../helpers/wait.js';

export { waitFor };

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CRM_SECRET = 'crm-secret-9f3a1c';

export interface Harness {
  engine: TestEngine;
  crm: CrmServer;
  model: ModelServer;
  workerToken: string;
  close(): Promise<void>;
}

export async function startHarness(
  opts: {
    script?: Script;
    extraSource?: string;
    databaseUrl?: string;
    env?: Record<string, string>;
    /** how long the scripted model holds each answer (default 0) */
    modelLatencyMs?: number;
  } = {},
): Promise<Harness> {
  const [engine, crm, model] = await Promise.all([
    startTestEngine({ databaseUrl: opts.databaseUrl, env: opts.env }),
    startCrmServer({ token: CRM_SECRET }),
    startModelServer({ script: opts.script, latencyMs: opts.modelLatencyMs }),
  ]);
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER(crm.url)}---${SUPPORT_TRIAGE}---${REFUND}${opts.extraSource ?? ''}`,
  });
  await engine.ok(
    engine.adminToken,
    `mutation($n: String!, $s: String!) { setCredential(name: $n, secret: $s) }`,
    {
      n: 'crm-token',
      s: CRM_SECRET,
    },
  );
  const workerToken = await engine.principal('WORKER', 'agent-worker', { topics: ['abada:agent'] });
  return {
    engine,
    crm,
    model,
    workerToken,
    async close() {
      await Promise.allSettled([engine.close(), crm.close(), model.close()]);
    },
  };
}

export interface WorkerProcess {
  proc: ChildProcess;
  workerId: string;
  /** Every JSON log line so far. */
  readonly logs: Record<string, unknown>[];
  /** The raw stdout + stderr text so far. */
  readonly output: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnWorker(h: Harness, workerId: string, env: Record<string, string> = {}): WorkerProcess {
  const proc = spawn('node', bundled('worker'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ABADA_URL: h.engine.url,
      ABADA_TOKEN: h.workerToken,
      ABADA_WORKER_ID: workerId,
      ABADA_WORKER_CONCURRENCY: '2',
      ABADA_WORKER_LOCK_MS: '3000',
      ABADA_WORKER_POLL_MS: '2000',
      ABADA_MODEL_BASE_URL: h.model.url,
      ABADA_MODEL_API_KEY: 'test-key',
      ABADA_LOG_LEVEL: 'debug',
      ...env,
    } as unknown as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let output = '';
  let partial = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output += text;
    partial += text;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a JSON line (a Node warning): kept in output only
      }
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    workerId,
    logs,
    get output() {
      return output;
    },
    exited,
    kill(signal = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    },
  };
}

export const INSTANCE = `query($id: ID!) { processInstance(id: $id) { id state currentNodeId variables
  tasks { id state nodeId attempt errorType errorMessage workerId metadata
    steps { attempt sequence kind state toolRef model idempotencyKey reused comment response error purpose reconciled } }
  history { eventType actor attempt sequence data } } }`;

export async function instance(h: Harness, id: string) {
  return (await h.engine.ok(h.engine.adminToken, INSTANCE, { id })).processInstance as {
    id: string;
    state: string;
    currentNodeId: string | null;
    variables: Record<string, unknown>;
    tasks: {
      id: string;
      state: string;
      nodeId: string;
      attempt: number;
      errorType: string | null;
      errorMessage: string | null;
      workerId: string | null;
      metadata: Record<string, unknown> | null;
      steps: {
        attempt: number;
        sequence: number;
        kind: string;
        state: string;
        toolRef: string | null;
        model: string | null;
        idempotencyKey: string | null;
        reused: boolean;
        comment: string | null;
        response: unknown;
        error: string | null;
        purpose: 'CALL' | 'PRECONDITION' | 'LOOKUP';
        reconciled: boolean;
      }[];
    }[];
    history: {
      eventType: string;
      actor: string;
      attempt: number | null;
      sequence: number | null;
      data: Record<string, unknown>;
    }[];
  };
}

export async function startProcess(h: Harness, key: string, variables: Record<string, unknown>) {
  const r = await h.engine.ok(h.engine.adminToken, Q.start, { key, v: variables });
  return r.startProcess.id as string;
}

/** Waits until every instance of `ids` stands at `nodeId`; their views then. */
export async function allAtNode(h: Harness, ids: string[], nodeId: string, timeoutMs = 60_000) {
  return waitFor(
    `${ids.length} instances at ${nodeId}`,
    async () => {
      const all = await Promise.all(ids.map((id) => instance(h, id)));
      return all.every((i) => i.currentNodeId === nodeId) ? all : null;
    },
    timeoutMs,
  );
}

/** `1:MODEL_CALL:COMPLETED`-style journal summary of a task. */
export const journalOf = (t: {
  steps: { attempt: number; sequence: number; kind: string; state: string; purpose?: string }[];
}) =>
  t.steps.map(
    (s) =>
      `${s.attempt}.${s.sequence}:${s.kind}:${s.state}${s.purpose && s.purpose !== 'CALL' ? `:${s.purpose}` : ''}`,
  );
