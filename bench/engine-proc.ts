/** One engine process for the bench (a child process, so the load generator does not share its CPU). */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import pg from 'pg';
import { startEngine } from '../server/app.js';
import { loadConfig } from '../server/config.js';
import { connectionOf } from '../server/db/pg.js';
import { flushStats } from './pgstat.js';

const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? '0' });
// Quiet (errors only) unless LOG_LEVEL asks for the JSON logs (the log-content test does).
const engine = await startEngine(process.env.LOG_LEVEL ? { config } : { config, log: () => {} });
process.stdout.write(`READY ${engine.url}\n`);
process.on('SIGTERM', () => {
  engine.close().finally(() => process.exit(0));
});

// The bench counts a window's commits and rows in pg_stat_database, which a backend updates lazily: on
// its request every connection of the engine's pool flushes its counts (bench/pgstat.ts).
process.on('message', async (m: { kind: string }) => {
  if (m.kind !== 'flushStats') return;
  const pool = connectionOf(engine.context.db);
  if (!(pool instanceof pg.Pool)) throw new Error('engine-proc: the engine Db is not bound to a pool');
  process.send?.({ kind: 'flushedStats', commits: await flushStats(pool) });
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
