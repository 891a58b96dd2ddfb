/**
 * `npm start`: one process, one port — GraphQL API, dashboard and /healthz — on the embedded PostgreSQL
 * unless DATABASE_URL names another. On the embedded database (or with `--demo`) it also starts the demo:
 * CRM MCP server, scripted model, an Agent Worker, demo users and Alice's refund waiting for finance.
 *
 * Flags: `--demo` (force the demo), `--no-demo` (embedded database without it), `--dev` (Next.js dev
 * server with hot reload instead of the production build). When the dashboard's build is missing or was
 * made from other sources, it is built in the background (server/web/build.ts): the API, /healthz and the
 * demo are up before it ends, and the dashboard's paths say it is being built until then.
 */
import { startEngine } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { EmbeddedPostgresError } from './db/embedded.js';
import { type Demo, demoBanner, startDemo } from './demo/demo.js';
import { startTracing, TracingConfigError } from './telemetry/index.js';
import { startDashboard } from './web/index.js';

/** The demo (`--demo`, or the embedded database without `--no-demo`), else the engine and dashboard. */
async function start(config: Config, argv: string[]): Promise<Pick<Demo, 'engine' | 'dashboard' | 'close'>> {
  const dev = argv.includes('--dev');
  if (!argv.includes('--no-demo') && (argv.includes('--demo') || config.databaseUrl === null)) {
    const demo = await startDemo({ config, dev });
    console.log(demoBanner(demo));
    return demo;
  }
  const dashboard = startDashboard({ dev });
  const engine = await startEngine({ config, web: dashboard.handle });
  if (config.adminToken)
    console.log('[abada] ABADA_ADMIN_TOKEN is set: use it as a bearer token for admin calls.');
  return {
    engine,
    dashboard,
    close: async () => {
      dashboard.close();
      await engine.close();
    },
  };
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`[abada] configuration error: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  const tracing = await startTracing({ serviceName: 'abada' });
  const { engine, dashboard, close } = await start(config, process.argv.slice(2));
  console.log(
    `[abada] ready at ${engine.url} (dashboard ${engine.url}/, GraphQL ${engine.url}/graphql, health ${engine.url}/healthz)`,
  );
  // A failed build is logged where it happens; the engine keeps serving the API.
  dashboard.ready.then(
    () => console.log(`[abada] dashboard ready at ${engine.url}/`),
    () => {},
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[abada] ${signal}: stopping`);
    await close().catch((e) => console.error(e));
    await tracing?.shutdown();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  // A failure the operator can act on is one line saying what to do; anything else is a bug, with its stack.
  if (e instanceof EmbeddedPostgresError || e instanceof ConfigError || e instanceof TracingConfigError)
    console.error(`[abada] ${e.message}`);
  else console.error('[abada] failed to start:', e);
  process.exit(1);
});
