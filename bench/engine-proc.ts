/** One engine process for the bench (a child process, so the load generator does not share its CPU). */
import { startEngine } from '../server/app.js';
import { loadConfig } from '../server/config.js';

const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? '0' });
// Quiet (errors only) unless LOG_LEVEL asks for the JSON logs (the log-content test does).
const engine = await startEngine(process.env.LOG_LEVEL ? { config } : { config, log: () => {} });
process.stdout.write(`READY ${engine.url}\n`);
process.on('SIGTERM', () => {
  engine.close().finally(() => process.exit(0));
});
