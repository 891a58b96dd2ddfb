/** One engine process: database (embedded without DATABASE_URL), migrations, listener, server, sweeps. */
import path from 'node:path';
import type { Config } from './config.js';
import { connect } from './db/client.js';
import { type EmbeddedServer, startEmbeddedPostgres } from './db/embedded.js';
import { runMigrations } from './db/migrate.js';
import { Notifier, startStreamPruning } from './engine/events/index.js';
import { type BackgroundLoop, type EngineContext, createCounters, Sealer } from './engine/common/index.js';
import { startJobRunner, sweepBoundaries } from './engine/instances/index.js';
import { registerFirstPartyWorkers } from './engine/principals/index.js';
import { startSweeps } from './engine/approvals/index.js';
import { EventHub } from './graphql/pubsub.js';
import { createEngineServer, type WebHandler } from './graphql/server.js';
import { createLogger, type Logger } from './log.js';
import { isUnavailable } from './errors.js';
import { startWebhookDispatcher } from './engine/webhooks/index.js';

export type Engine = Awaited<ReturnType<typeof startEngine>>;

export interface StartOptions {
  config: Config;
  /** overrides config.databaseUrl (tests) */
  databaseUrl?: string;
  web?: WebHandler | null;
  /** a line sink for start-up messages; passing one (tests) also quiets the JSON logs to errors */
  log?: (line: string) => void;
  sweeps?: boolean;
}

export async function startEngine(opts: StartOptions) {
  const { config } = opts;
  const logger = createLogger({ level: opts.log ? 'error' : config.logLevel });
  const log = opts.log ?? ((l: string) => logger.info(l));
  let embedded: EmbeddedServer | null = null;
  let url = opts.databaseUrl ?? config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'pg'));
    url = embedded.url;
    log(
      `embedded PostgreSQL on port ${embedded.port}, data in ${path.join(config.dataDir, 'pg')}` +
        (embedded.sharedHome
          ? ` (binaries and data under ${embedded.sharedHome}/: as root, the server runs as the OS user ` +
            'postgres, which cannot enter this checkout)'
          : ''),
    );
  }
  await runMigrations(url);
  const db = connect(url, { max: 30 });
  const notifier = new Notifier(url);
  await notifier.start();
  const context: EngineContext = {
    db: db.db,
    sealer: new Sealer(config.encryption),
    config,
    notifier,
    counters: createCounters(),
  };
  const sweep = await registerFirstPartyWorkers(context, config.firstPartyWorkers).catch(async (e) => {
    // a start that cannot register its workers closes what it opened, then says what to fix
    await notifier.close();
    await db.close();
    await embedded?.stop();
    throw e;
  });
  if (sweep.created.length || sweep.updated.length)
    log(
      `first-party workers: created ${sweep.created.join(', ') || 'none'}; updated ${sweep.updated.join(', ') || 'none'}`,
    );
  const hub = new EventHub(notifier);
  const { server, close: closeServer } = createEngineServer({ engine: context, hub, web: opts.web, logger });
  const failed = (loop: BackgroundLoop) => backgroundFailure(logger, context, loop);
  const sweeps = opts.sweeps !== false;
  const stops = [
    sweeps ? startSweeps(context, failed('sweeps'), [sweepBoundaries]) : () => {},
    startJobRunner(context, failed('jobs')),
    sweeps ? startStreamPruning(context, failed('stream_pruning')) : () => {},
    startWebhookDispatcher(context, failed('webhooks')),
  ];
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  let closed = false;
  return {
    url: `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`,
    port,
    databaseUrl: url,
    context,
    async close() {
      if (closed) return;
      closed = true;
      for (const stop of stops) stop();
      await closeServer();
      await notifier.close();
      await db.close();
      if (embedded) await embedded.stop();
    },
  };
}

/**
 * How a background loop's failed round is logged and counted (abada_background_failures_total): the
 * database being down or restarting is one warning line (the loop tries again on its next round, and
 * /readyz already says so); anything else is an error with its stack.
 */
function backgroundFailure(logger: Logger, { counters }: EngineContext, loop: BackgroundLoop) {
  return (err: unknown) => {
    if (isUnavailable(err)) {
      counters.backgroundFailures[loop].unavailable++;
      logger.warn({ event: 'db.unavailable', loop }, `${loop}: the database is unavailable; trying again`);
    } else {
      counters.backgroundFailures[loop].error++;
      logger.error({ err, loop }, `${loop} failed`);
    }
  };
}
