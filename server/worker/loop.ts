/**
 * The engine loop: register, then long-poll `fetchAndLock` for the free slots, run each task, and back
 * off (exponentially, with jitter) while the engine is unreachable. `stop()` stops fetching, lets running
 * tasks finish within the grace period, then hands the rest back (deferTask, reason `shutdown`) so no
 * lease lapses toward poison work; a task whose write is STARTED cannot be handed back and lapses.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import pino, { type Logger } from 'pino';
import { traceLogFields } from '../telemetry/index.js';
import type { WorkerConfig } from './config.js';
import {
  backoffMs,
  EngineClient,
  GraphQLRequestError,
  isRetryable,
  type LockedTask,
  sleep,
} from './graphql.js';
import { ClientCredentials } from './credentials.js';
import { monotonicMs } from './lease.js';
import { ModelClient } from './model.js';
import { deferTask, runTask, SHUTDOWN, type TaskOutcome } from './task.js';

export type WorkerHandle = Awaited<ReturnType<typeof startWorker>>;

export interface StartOptions {
  logger?: Logger;
  /** Called when a task ends on this worker (tests, the demo). */
  onTaskEnd?: (task: LockedTask, outcome: TaskOutcome) => void;
}

/** The token is wrong or lacks the topics: no retry fixes it. */
const FATAL_CODES = new Set(['UNAUTHENTICATED', 'FORBIDDEN']);

export function createLogger(config: Pick<WorkerConfig, 'logLevel' | 'workerId'>): Logger {
  // Synchronous writes: a line is out before the process exits (SIGTERM → exit 0).
  return pino(
    { level: config.logLevel, base: { workerId: config.workerId }, mixin: traceLogFields },
    pino.destination({ dest: 1, sync: true }),
  );
}

/** What the loop's phases share. */
interface Loop {
  config: WorkerConfig;
  opts: StartOptions;
  log: Logger;
  client: EngineClient;
  models: ModelClient;
  stopping: AbortController;
  /** abandon running tasks (the grace period is over) */
  hardStop: AbortController;
  running: Set<Promise<void>>;
}

function launch(l: Loop, task: LockedTask, leasedAfter: number | null) {
  const { log } = l;
  const run =
    leasedAfter === null
      ? deferTask(task, l, log.child({ taskId: task.id }), SHUTDOWN, { timeoutMs: 5000 })
      : runTask(task, { ...l, leasedAfter, signal: l.hardStop.signal });
  const p = run
    .then(
      (outcome) => {
        log.info({ event: 'task.end', taskId: task.id, attempt: task.attempt, outcome }, 'task ended');
        l.opts.onTaskEnd?.(task, outcome);
      },
      (e: unknown) => {
        log.error({ event: 'task.crash', taskId: task.id, err: String(e) }, 'task runner failed');
      },
    )
    .finally(() => l.running.delete(p));
  l.running.add(p);
}

/** Registers once, retrying while the engine is unreachable; a refused token is fatal. */
async function register(l: Loop) {
  const { config, log, stopping } = l;
  for (let i = 0; !stopping.signal.aborted; i++) {
    try {
      const { workerId, topics, models, concurrency } = config;
      await l.client.registerWorker({ workerId, topics, models }, { signal: stopping.signal });
      log.info({ event: 'worker.registered', topics, concurrency }, 'registered');
      return;
    } catch (e) {
      if (stopping.signal.aborted) return;
      if (e instanceof GraphQLRequestError && FATAL_CODES.has(e.code)) throw e;
      const wait = backoffMs(i);
      log.warn({ event: 'engine.unreachable', retryInMs: wait, err: String(e) }, 'cannot register; retrying');
      await sleep(wait, stopping.signal);
    }
  }
}

/** Long-polls for as many tasks as there are free slots and starts each; backs off while unreachable. */
async function fetchLoop(l: Loop) {
  const { config, log, stopping, running } = l;
  let failures = 0;
  // One id per fetch, kept until an answer comes: a fetch re-sent after no answer (the engine's
  // database restarted, the connection dropped) gets the claim it may already have made.
  let request: { id: string; sentAt: number; maxTasks: number } | null = null;
  // one listener for the loop's life: a full worker waits here once per task that ends
  const stopped = new Promise<void>((r) =>
    stopping.signal.addEventListener('abort', () => r(), { once: true }),
  );
  while (!stopping.signal.aborted) {
    const free = config.concurrency - running.size;
    if (free <= 0) {
      await Promise.race([...running, stopped]);
      continue;
    }
    let tasks: LockedTask[];
    request ??= { id: randomUUID(), sentAt: monotonicMs(), maxTasks: free };
    try {
      tasks = await l.client.fetchAndLock(
        {
          workerId: config.workerId,
          requestId: request.id,
          maxTasks: request.maxTasks,
          topics: config.topics.map((topicName) => ({ topicName, lockDurationMs: config.lockMs })),
          asyncResponseTimeoutMs: config.pollMs,
        },
        { signal: stopping.signal },
      );
      failures = 0;
    } catch (e) {
      if (e instanceof GraphQLRequestError && !isRetryable(e)) request = null; // refused: nothing claimed
      if (stopping.signal.aborted) break;
      if (e instanceof GraphQLRequestError && FATAL_CODES.has(e.code)) throw e;
      const wait = backoffMs(failures++);
      log.warn({ event: 'engine.unreachable', retryInMs: wait, err: String(e) }, 'fetch failed; backing off');
      await sleep(wait, stopping.signal);
      continue;
    }
    // The leases were taken after the first send of this request: the local deadline counts from it.
    const sentAt = request.sentAt;
    request = null;
    for (const t of tasks) {
      // fetched as we were stopping: handed back at once, not started
      launch(l, t, stopping.signal.aborted ? null : sentAt);
    }
  }
}

/** Lets running tasks finish within the grace period, then stops the rest, which hand their leases back. */
async function drain(l: Loop) {
  if (l.running.size === 0) return;
  const graceOver = new AbortController();
  const grace = sleep(l.config.graceMs, graceOver.signal).then(() => 'timeout' as const);
  const all = Promise.allSettled([...l.running]).then(() => 'done' as const);
  const first = await Promise.race([grace, all]);
  graceOver.abort();
  if (first === 'timeout') {
    l.log.warn(
      { event: 'worker.grace_expired', running: l.running.size },
      'grace period over; handing running tasks back',
    );
    l.hardStop.abort();
    await Promise.allSettled([...l.running]);
  }
}

export async function startWorker(config: WorkerConfig, opts: StartOptions = {}) {
  const log = opts.logger ?? createLogger(config);
  const token = config.oidc
    ? new ClientCredentials(config.oidc, (expiresInS) =>
        log.info({ event: 'worker.token_renewed', expiresInS }, 'access token from the OpenID Provider'),
      ).token
    : config.token;
  const l: Loop = {
    config,
    opts,
    log,
    client: new EngineClient(config.engineUrl, token, { batchJournal: config.journalBatch }),
    models: new ModelClient(config),
    stopping: new AbortController(),
    hardStop: new AbortController(),
    running: new Set(),
  };
  // Each running task's lease listens to the hard-stop signal until it ends: up to `concurrency` at
  // once, removed as each ends. Node warns past 10 (MaxListenersExceededWarning) as if it were a leak.
  // The stopping signal keeps Node's default, so a listener leak there still shows.
  setMaxListeners(config.concurrency + 10, l.hardStop.signal);
  let fatal: Error | null = null;
  const done = (async () => {
    await register(l);
    await fetchLoop(l);
  })()
    .catch((e: unknown) => {
      fatal = e instanceof Error ? e : new Error(String(e));
      log.error({ event: 'worker.fatal', err: fatal.message }, 'the worker cannot run');
      l.stopping.abort();
    })
    .then(() => drain(l))
    // how its journal calls travelled (calls, requests, batches): batching shows only under load
    .finally(() => log.info({ event: 'worker.stopped', journal: l.client.journal.counts }, 'worker stopped'));

  return {
    workerId: config.workerId,
    /** resolves when the loop has ended (after stop(), or a fatal error such as a refused token) */
    done,
    /** set when the loop ended on a fatal error */
    get fatal() {
      return fatal;
    },
    /** stops fetching, waits up to graceMs for running tasks, then hands the rest back (deferTask) */
    async stop() {
      if (!l.stopping.signal.aborted)
        log.info({ event: 'worker.stopping', running: l.running.size }, 'stopping');
      l.stopping.abort();
      await done;
    },
  };
}
