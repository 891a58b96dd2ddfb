/**
 * One demo stack for the whole e2e run: a fresh data directory (so a fresh embedded PostgreSQL), the
 * engine with the dashboard on an ephemeral port, CRM and model doubles, and the Agent Worker when the
 * repository has one. The tests start once the dashboard serves (built first when its sources changed,
 * or by another process of the checkout, which this one then waits for). Alice's refund is not started:
 * each test starts its own work after its page loaded. The URL and tokens travel to the tests in
 * process.env (Playwright passes it on to its workers).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../server/config.js';
import { startDemo } from '../../server/demo/demo.js';

export default async function globalSetup() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'abada-e2e-'));
  chmodSync(dir, 0o755); // the embedded server runs as its own OS user when we are root
  const config = loadConfig({
    ABADA_DATA_DIR: dir,
    PORT: '0',
    HOST: '127.0.0.1',
    ABADA_HEARTBEAT_DEBOUNCE_MS: '0',
    LOG_LEVEL: 'error',
  });
  // E2E_WORKER=sim runs the specs' stand-in worker instead of server/worker (to check that path too)
  const demo = await startDemo({
    config,
    alice: false,
    worker: process.env.E2E_WORKER !== 'sim',
  });
  const stop = async () => {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (process.env.E2E_WORKER !== 'sim' && !demo.workerRunning) {
      throw new Error('the Agent Worker did not start: the specs would silently fall back to the stand-in');
    }
    await demo.dashboard.ready;
  } catch (e) {
    await stop();
    throw e;
  }
  const tokens = Object.fromEntries(demo.users.map((u) => [u.name, u.token]));
  process.env.E2E_URL = demo.engine.url;
  process.env.E2E_CRM_URL = demo.crmUrl.replace(/\/mcp$/, '');
  process.env.E2E_ADMIN_TOKEN = demo.adminToken;
  process.env.E2E_WORKER_TOKEN = demo.workerToken;
  process.env.E2E_REAL_WORKER = demo.workerRunning ? '1' : '';
  process.env.E2E_TOKENS = JSON.stringify(tokens);
  return stop;
}
