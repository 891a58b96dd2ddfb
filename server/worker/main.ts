/**
 * The first-party Agent Worker (`npm run worker`), configured by the environment (docs/worker.md).
 * SIGTERM / SIGINT: stop fetching, let running tasks finish within ABADA_WORKER_GRACE_MS, hand the rest
 * back (another worker resumes them from the journal at once), exit 0. A second signal exits at once.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startTracing, TracingConfigError, type TracingHandle } from '../telemetry/index.js';
import { loadWorkerConfig, WorkerConfigError } from './config.js';
import { createLogger, startWorker } from './loop.js';

export { loadWorkerConfig, type WorkerConfig, WorkerConfigError, workerConfig } from './config.js';
export { createLogger, type StartOptions, startWorker, type WorkerHandle } from './loop.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadWorkerConfig>;
  try {
    config = loadWorkerConfig(process.env);
  } catch (e) {
    if (e instanceof WorkerConfigError) {
      process.stderr.write(`${e.message}\nSee docs/worker.md for every variable.\n`);
      process.exit(2);
    }
    throw e;
  }
  let tracing: TracingHandle | null;
  try {
    tracing = await startTracing({ serviceName: 'abada-worker' });
  } catch (e) {
    if (!(e instanceof TracingConfigError)) throw e;
    process.stderr.write(`${e.message}\nSee docs/tracing.md.\n`);
    process.exit(2);
  }
  // buffered spans go out before the process does
  const exit = (code: number) =>
    void (tracing?.shutdown() ?? Promise.resolve()).then(() => process.exit(code));
  const log = createLogger(config);
  const worker = await startWorker(config, { logger: log });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      log.warn({ event: 'worker.exit_now', signal }, 'second signal: exiting now');
      process.exit(0);
    }
    log.info({ event: 'worker.signal', signal }, 'shutting down');
    void worker.stop().then(() => exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await worker.done;
  exit(worker.fatal ? 1 : 0);
}

function isMain(): boolean {
  try {
    return (
      !!process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))
    );
  } catch (e) {
    // argv[1] names no file (node -e, a REPL): not started as a script
    if ((e as { code?: unknown }).code !== 'ENOENT') throw e;
    return false;
  }
}

if (isMain()) await main();
