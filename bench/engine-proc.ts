/** One engine process for the bench (a child process, so the load generator does not share its CPU). */
import { startEngine } from '../server/app.js';
import { loadConfig } from '../server/config.js';

const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? '0' });
const engine = await startEngine({ config, log: () => {} });
process.stdout.write(`READY ${engine.url}\n`);
process.on('SIGTERM', () => {
  engine.close().finally(() => process.exit(0));
});
