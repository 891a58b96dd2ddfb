/**
 * The dashboard's production build (`next build web`), made once per change of its sources (source-hash.ts):
 * in the background of `npm start`, by the e2e set-up, or by `npm run web:build`; a lock (lock.ts) makes one
 * checkout build once. It runs under `nice -n 10` (beside an engine and a demo that must start quickly) and
 * skips Next's type check unless asked: `npm test` runs `tsc --noEmit -p web` anyway (docs/decisions.md).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildLock, lockHolder, tryLock, unless } from './lock.js';
import { webSourceHash } from './source-hash.js';

/** The checkout this engine runs from. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const HASH_FILE = path.join('.next', 'abada-source-hash');
const LOCK_FILE = '.next-build.lock';
const NICE = '/usr/bin/nice';
const WAIT_POLL_MS = 250;
/** The lines of the build's output kept for the message when it fails. */
const TAIL_LINES = 40;

export interface BuildOptions {
  /** The checkout to build in (its web/ and schema.graphql); default: this engine's. */
  root?: string;
  /** Run Next's own type check too (`npm run web:build`); `npm start` and the tests leave it to `npm test`. */
  typecheck?: boolean;
  /** Build even when the build is current. */
  force?: boolean;
  /** Show the build's output as it comes (`npm run web:build`); otherwise only its last lines on failure. */
  inheritOutput?: boolean;
  log?: (line: string) => void;
}

export type BuildState = 'current' | 'building' | 'waiting' | 'built' | 'failed' | 'stopped';

export class WebBuildError extends Error {
  override name = 'WebBuildError';
}

/** The source hash web/.next was built from, or null when it holds no complete build. */
function builtFrom(web: string): string | null {
  if (!existsSync(path.join(web, '.next', 'BUILD_ID'))) return null;
  return unless('ENOENT', () => readFileSync(path.join(web, HASH_FILE), 'utf8'), null);
}

/** Whether `root`'s web/.next holds a build of its current sources. */
export function webIsBuilt(root = ROOT): boolean {
  return builtFrom(path.join(root, 'web')) === webSourceHash(root);
}

/** Kills the build's process group: Next starts workers of its own, which a kill of `nice` would leave. */
function killGroup(child: ChildProcess | null): void {
  const pid = child?.pid;
  if (!pid || child.exitCode !== null || child.signalCode !== null) return;
  unless('ESRCH', () => process.kill(-pid, 'SIGTERM'), false);
}

/**
 * Builds the dashboard unless current or another process of the checkout builds it. `done` resolves once
 * web/.next holds a current build, rejects if it failed or stopped; `stop()` kills ours, frees the lock.
 */
export function startWebBuild(opts: BuildOptions = {}) {
  const root = opts.root ?? ROOT;
  const web = path.join(root, 'web');
  const log = opts.log ?? console.log;
  let state: BuildState = 'waiting';
  let stopped = false;
  let child: ChildProcess | null = null;
  let lock: BuildLock | null = null;

  // An engine that exits without its close (process.exit on a fatal error) still ends its build.
  const onExit = () => {
    killGroup(child);
    lock?.release();
  };

  const run = async (): Promise<void> => {
    let announcedWait = false;
    for (;;) {
      if (stopped) throw new WebBuildError('the dashboard build was stopped');
      if (!opts.force && webIsBuilt(root)) {
        state = 'current';
        return;
      }
      lock = tryLock(path.join(web, LOCK_FILE));
      if (lock) break;
      if (!announcedWait) {
        const holder = lockHolder(path.join(web, LOCK_FILE));
        log(
          `[abada] another process of this checkout${holder ? ` (pid ${holder.pid})` : ''} is building the ` +
            'dashboard; this one serves it when that build ends',
        );
        announcedWait = true;
      }
      await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
    }
    process.on('exit', onExit);
    try {
      // What the build starts from: a source changed while it runs makes the next start build again.
      const hash = webSourceHash(root);
      // The winner of the lock may find the build that it waited for already made.
      if (!opts.force && builtFrom(web) === hash) {
        state = 'current';
        return;
      }
      state = 'building';
      rmSync(path.join(web, HASH_FILE), { force: true });
      const t0 = Date.now();
      log('[abada] building the dashboard (next build web, about half a minute on two cores)');
      await runBuild(root, opts, (c) => {
        child = c;
        if (c.pid) lock?.setBuildPid(c.pid);
      });
      if (stopped) throw new WebBuildError('the dashboard build was stopped');
      writeFileSync(path.join(web, HASH_FILE), hash);
      state = 'built';
      log(`[abada] dashboard built in ${Math.round((Date.now() - t0) / 1000)} s`);
    } finally {
      lock?.release();
      lock = null;
      process.off('exit', onExit);
    }
  };

  const done = run().catch((e) => {
    state = stopped ? 'stopped' : 'failed';
    throw e;
  });
  // `done` still rejects for whoever awaits it; this only keeps a build nobody awaits (an engine stopped
  // while it waited) from ending the process as an unhandled rejection.
  done.catch(() => {});
  return {
    done,
    state: (): BuildState => state,
    stop() {
      stopped = true;
      killGroup(child);
    },
  };
}

/**
 * `next build web` in its own process group at a lower priority; ABADA_WEB_BUILD_COMMAND, a test hook,
 * runs a shell command instead (a build that takes as long as a test needs, or fails).
 */
function runBuild(root: string, opts: BuildOptions, started: (c: ChildProcess) => void): Promise<void> {
  const hook = process.env.ABADA_WEB_BUILD_COMMAND;
  const command = hook
    ? ['/bin/sh', '-c', hook]
    : [process.execPath, path.join(root, 'node_modules/next/dist/bin/next'), 'build', path.join(root, 'web')];
  const argv = existsSync(NICE) ? [NICE, '-n', '10', ...command] : command;
  const c = spawn(argv[0]!, argv.slice(1), {
    cwd: root,
    detached: true,
    stdio: opts.inheritOutput ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: '1',
      // read by web/next.config.mjs
      ABADA_WEB_TYPECHECK: opts.typecheck ? '1' : '0',
    },
  });
  started(c);
  const tail: string[] = [];
  const keep = (d: Buffer) => {
    const lines = d.toString().split('\n');
    tail.push(...lines.filter((l) => l.trim()));
    tail.splice(0, Math.max(0, tail.length - TAIL_LINES));
  };
  c.stdout?.on('data', keep);
  c.stderr?.on('data', keep);
  return new Promise((resolve, reject) => {
    c.on('error', reject);
    c.on('close', (code, signal) => {
      if (code === 0) return resolve();
      const lines = tail.length ? `; its last lines:\n${tail.join('\n')}` : '';
      const why = signal ?? `exit ${code}`;
      reject(new WebBuildError(`the dashboard build (next build web) failed (${why})${lines}`));
    });
  });
}
