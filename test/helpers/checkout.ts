/**
 * A copy of this checkout for tests that run `npm start` as a newcomer would: the working tree (tracked
 * and untracked files, so uncommitted changes are what is tried; ignored ones such as web/.next and .abada
 * stay behind) with node_modules hard-linked (`cp -al`, half a second), and the engine processes started
 * in it, each in its own process group so a failed test can kill what it started.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SOURCE = path.resolve('.');

/** Copies the working tree (what git would commit, less ignored files) into `dest`. */
export function copyWorkingTree(dest: string) {
  mkdirSync(dest);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: SOURCE,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && existsSync(path.join(SOURCE, f)));
  execFileSync('cp', ['--parents', '-t', dest, ...files], { cwd: SOURCE });
  execFileSync('cp', ['-al', path.join(SOURCE, 'node_modules'), path.join(dest, 'node_modules')]);
}

/** Our environment less what would point the engine elsewhere or make it think it runs under vitest. */
export function startEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extra };
  for (const name of Object.keys(env)) {
    if (/^(VITEST|DATABASE_URL$|ABADA_|NODE_OPTIONS$)/.test(name) && !(name in extra)) delete env[name];
  }
  return env;
}

export interface Started {
  child: ChildProcess;
  /** everything it printed so far, stdout and stderr */
  output(): string;
  exited: Promise<number | null>;
  /** SIGKILL to its whole process group, when it still runs (a failed test's clean-up) */
  kill(): void;
}

/** Spawns `command` in `cwd`, in a process group of its own, collecting what it prints. */
export function startIn(cwd: string, command: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(command[0]!, command.slice(1), {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    kill() {
      if (child.pid && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {}
      }
    },
  };
}

/**
 * Kills a dashboard build still running in `checkout` (its process group, named in the build lock): an
 * engine killed with -9 leaves its build running, as it would for a person who did that.
 */
export function killLeftoverBuild(checkout: string) {
  const lock = path.join(checkout, 'web', '.next-build.lock');
  if (!existsSync(lock)) return;
  try {
    const { buildPid } = JSON.parse(readFileSync(lock, 'utf8')) as { buildPid?: number };
    if (buildPid) process.kill(-buildPid, 'SIGKILL');
  } catch {}
}
