/**
 * Assembles one engine process: database (embedded when DATABASE_URL is unset), migrations, the
 * NOTIFY listener, the HTTP/WebSocket server and the background sweeps.
 */
import path from 'node:path';
import type { Config } from './config.js';
import { connect, type Database, type EmbeddedServer, startEmbeddedPostgres } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { Notifier } from './db/notify.js';
import type { EngineContext } from './engine/context.js';
import { Sealer } from './engine/crypto.js';
import { startJobRunner } from './engine/jobs.js';
import { startSweeps } from './engine/sweeps.js';
import { EventHub } from './graphql/pubsub.js';
import { createEngineServer, type WebHandler } from './graphql/server.js';

export interface Engine {
  url: string;
  port: number;
  databaseUrl: string;
  context: EngineContext;
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  /** overrides config.databaseUrl (tests) */
  databaseUrl?: string;
  web?: WebHandler | null;
  log?: (line: string) => void;
  sweeps?: boolean;
}

export async function startEngine(opts: StartOptions): Promise<Engine> {
  const { config } = opts;
  const log = opts.log ?? ((l: string) => console.log(l));
  let embedded: EmbeddedServer | null = null;
  let url = opts.databaseUrl ?? config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres(path.join(config.dataDir, 'pg'));
    url = embedded.url;
    log(`[abada] embedded PostgreSQL on port ${embedded.port}, data in ${path.join(config.dataDir, 'pg')}`);
  }
  await runMigrations(url);
  const db: Database = connect(url, { max: 30 });
  const notifier = new Notifier(url);
  await notifier.start();
  const context: EngineContext = { db: db.db, sealer: new Sealer(config.encryption), config, notifier };
  const hub = new EventHub(notifier);
  const { server, close: closeServer } = createEngineServer({ engine: context, hub, web: opts.web });
  const stopSweeps = opts.sweeps === false ? () => {} : startSweeps(context);
  const stopJobs = startJobRunner(context);
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
      stopSweeps();
      stopJobs();
      await closeServer();
      await notifier.close();
      await db.close();
      if (embedded) await embedded.stop();
    },
  };
}
