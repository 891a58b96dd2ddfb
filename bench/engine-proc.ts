/** One engine process for the bench (a child process, so the load generator does not share its CPU). */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { startEngine } from '../server/app.js';
import { loadConfig } from '../server/config.js';

const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? '0' });
// Quiet (errors only) unless LOG_LEVEL asks for the JSON logs (the log-content test does).
const engine = await startEngine(process.env.LOG_LEVEL ? { config } : { config, log: () => {} });
process.stdout.write(`READY ${engine.url}\n`);
process.on('SIGTERM', () => {
  engine.close().finally(() => process.exit(0));
});

// BENCH_PROFILE_WINDOWS=<dir>: SIGUSR2 starts a V8 CPU profile, the next SIGUSR2 writes it there — the
// bench brackets each measurement with them, so a profile holds only the measured work (no seeding).
const windows = process.env.BENCH_PROFILE_WINDOWS;
if (windows) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  let running = false;
  let n = 0;
  process.on('SIGUSR2', async () => {
    if (!running) {
      running = true;
      await session.post('Profiler.start');
      return;
    }
    running = false;
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(path.join(windows, `${process.pid}-${++n}.cpuprofile`), JSON.stringify(profile));
  });
}
