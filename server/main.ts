/**
 * `npm start`: one process, one port — GraphQL API, dashboard and /healthz — on the embedded PostgreSQL
 * unless DATABASE_URL names another.
 */
import { startEngine } from './app.js';
import { ConfigError, loadConfig } from './config.js';

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`[abada] configuration error: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  const engine = await startEngine({ config });
  console.log(
    `[abada] engine ready at ${engine.url} (GraphQL ${engine.url}/graphql, health ${engine.url}/healthz)`,
  );
  if (config.adminToken)
    console.log('[abada] ABADA_ADMIN_TOKEN is set: use it as a bearer token for admin calls.');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[abada] ${signal}: stopping`);
    await engine.close().catch((e) => console.error(e));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  console.error('[abada] failed to start:', e);
  process.exit(1);
});
