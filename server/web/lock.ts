/**
 * The lock that makes the processes of one checkout build the dashboard once: two engines started together
 * (the README's several-engines set-up, the e2e set-up beside `npm start`) would otherwise run two
 * `next build`s into the same web/.next, and each can delete what the other just wrote.
 *
 * An exclusive create (`open(…, 'wx')`) is atomic on every local file system. The file holds the engine's
 * pid and, once started, the build's. A lock is stale when both are dead (an engine killed with -9 leaves
 * its build running, and nobody may build beside it), older than an hour (a reused pid), or empty for 10 s
 * (its holder died between the create and the write).
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';

interface Holder {
  pid: number;
  buildPid?: number;
  since: string;
}

const MAX_AGE_MS = 60 * 60_000;
const EMPTY_GRACE_MS = 10_000;

export type BuildLock = NonNullable<ReturnType<typeof tryLock>>;

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    if (code === 'EPERM') return true; // it exists, as another user's process
    throw e;
  }
}

/** `fn()`, or `fallback` when it fails with the errno `code` (a file or a process that is not there). */
export function unless<T>(code: string, fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== code) throw e;
    return fallback;
  }
}

const readOrNull = (file: string) => unless('ENOENT', () => readFileSync(file, 'utf8'), null);

/** null when the lock file is empty or half-written */
function parseHolder(text: string): Holder | null {
  try {
    return JSON.parse(text) as Holder;
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  }
}

function isStale(text: string, file: string): boolean {
  const mtimeMs = unless('ENOENT', () => statSync(file).mtimeMs, null);
  if (mtimeMs === null) return false; // gone meanwhile: the next try creates it
  const ageMs = Date.now() - mtimeMs;
  if (ageMs > MAX_AGE_MS) return true;
  const holder = parseHolder(text);
  if (!holder) return ageMs > EMPTY_GRACE_MS;
  return !alive(holder.pid) && !alive(holder.buildPid);
}

/** Who holds the lock now (for the log), or null when nobody does. */
export function lockHolder(file: string): Holder | null {
  const text = readOrNull(file);
  return text ? parseHolder(text) : null;
}

/** Takes the lock when it is free or stale; never blocks: null when a live process holds it. */
export function tryLock(file: string) {
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const seen = readOrNull(file);
      if (seen === null) continue; // released between the create and the read
      if (!isStale(seen, file)) return null;
      // Removes only the lock judged stale: read again right before unlinking, so a lock that another
      // process took over in between stays. What is left is the microseconds between read and unlink.
      if (readOrNull(file) === seen) unlinkSync(file);
      continue;
    }
    const holder: Holder = { pid: process.pid, since: new Date().toISOString() };
    writeFileSync(fd, JSON.stringify(holder));
    closeSync(fd);
    let held = true;
    return {
      /** records the build's pid, so that the lock outlives an engine killed while its build runs */
      setBuildPid(pid: number) {
        if (held) writeFileSync(file, JSON.stringify({ ...holder, buildPid: pid }));
      },
      release() {
        if (!held) return;
        held = false;
        unless('ENOENT', () => unlinkSync(file), undefined);
      },
    };
  }
  return null;
}
