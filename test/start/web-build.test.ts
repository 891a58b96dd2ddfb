/**
 * The dashboard's build as start-up makes it (server/web/build.ts), on a small checkout of its own with
 * a stand-in for `next build` (ABADA_WEB_BUILD_COMMAND): whether a build is current goes by content, a
 * build runs once however many ask for it at once, a lock left by a dead process is taken over, a failed
 * build says why, and a stopped one takes its whole process group with it.
 * Two real engines on one real checkout: two-engines.test.ts.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWebBuild, WebBuildError, webIsBuilt, webSourceHash } from '../../server/web/index.js';
import { waitFor } from '../helpers/wait.js';

let root: string;
const LOCK = () => path.join(root, 'web', '.next-build.lock');
const builds = () =>
  existsSync(path.join(root, 'builds')) ? readFileSync(path.join(root, 'builds'), 'utf8').length : 0;
const lines: string[] = [];
const log = (l: string) => lines.push(l);

/** A stand-in for `next build web`: counts itself, takes `seconds`, writes the BUILD_ID Next.js would. */
function fakeBuild(seconds = 0) {
  process.env.ABADA_WEB_BUILD_COMMAND = `printf x >> builds && sleep ${seconds} && mkdir -p web/.next && echo fake > web/.next/BUILD_ID`;
}

/** The pid of a process that has exited. */
const deadPid = () => spawnSync('true').pid!;

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'abada-start-build-'));
  mkdirSync(path.join(root, 'web/app'), { recursive: true });
  writeFileSync(path.join(root, 'schema.graphql'), 'type Query { ping: String }\n');
  writeFileSync(path.join(root, 'web/app/page.tsx'), 'export default () => null;\n');
  lines.length = 0;
  fakeBuild();
});
afterEach(() => {
  delete process.env.ABADA_WEB_BUILD_COMMAND;
  rmSync(root, { recursive: true, force: true });
});

describe('whether the build is current', () => {
  it('goes by content: the same text written again changes nothing, another byte does', () => {
    const before = webSourceHash(root);
    const schema = path.join(root, 'schema.graphql');
    writeFileSync(schema, readFileSync(schema));
    utimesSync(schema, new Date(), new Date(Date.now() + 60_000));
    expect(webSourceHash(root)).toBe(before);
    writeFileSync(path.join(root, 'web/app/page.tsx'), 'export default () => 1;\n');
    expect(webSourceHash(root)).not.toBe(before);
  });

  it('leaves out what Next.js writes into web/ and what is not a source', () => {
    const before = webSourceHash(root);
    mkdirSync(path.join(root, 'web/.next/cache'), { recursive: true });
    writeFileSync(path.join(root, 'web/.next/cache/x'), 'x');
    mkdirSync(path.join(root, 'web/node_modules'));
    writeFileSync(path.join(root, 'web/node_modules/y'), 'y');
    writeFileSync(path.join(root, 'web/next-env.d.ts'), '/// <reference types="next" />');
    writeFileSync(path.join(root, 'web/tsconfig.tsbuildinfo'), '{}');
    writeFileSync(LOCK(), '{}');
    expect(webSourceHash(root)).toBe(before);
  });
});

describe('the build', () => {
  it('builds once, then finds the build current, also after schema.graphql is rewritten unchanged', async () => {
    const first = startWebBuild({ root, log });
    expect(first.state()).toBe('building');
    await first.done;
    expect(first.state()).toBe('built');
    expect(webIsBuilt(root)).toBe(true);
    expect(existsSync(LOCK())).toBe(false);
    const schema = path.join(root, 'schema.graphql');
    writeFileSync(schema, readFileSync(schema));
    const again = startWebBuild({ root, log });
    expect(again.state()).toBe('current');
    await again.done;
    expect(builds()).toBe(1);
    expect(lines.filter((l) => l.includes('building the dashboard'))).toHaveLength(1);
  });

  it('runs once when two ask at once: the second waits for the first and builds nothing', async () => {
    fakeBuild(1);
    const a = startWebBuild({ root, log });
    const b = startWebBuild({ root, log });
    expect([a.state(), b.state()]).toEqual(['building', 'waiting']);
    expect(lines.some((l) => l.includes(`another process of this checkout (pid ${process.pid})`))).toBe(true);
    await Promise.all([a.done, b.done]);
    expect(b.state()).toBe('current');
    expect(builds()).toBe(1);
  });

  it('takes over a lock whose engine and build are both dead', async () => {
    writeFileSync(
      LOCK(),
      JSON.stringify({ pid: deadPid(), buildPid: deadPid(), since: new Date().toISOString() }),
    );
    await startWebBuild({ root, log }).done;
    expect(builds()).toBe(1);
  });

  it('waits while a lock names a live build, even when its engine died (killed mid-build)', async () => {
    writeFileSync(
      LOCK(),
      JSON.stringify({ pid: deadPid(), buildPid: process.pid, since: new Date().toISOString() }),
    );
    const b = startWebBuild({ root, log });
    expect(b.state()).toBe('waiting');
    await new Promise((r) => setTimeout(r, 600));
    expect(b.state()).toBe('waiting');
    rmSync(LOCK());
    await b.done;
    expect(builds()).toBe(1);
  });

  it('says why it failed, with the build’s last lines, and leaves no build that looks current', async () => {
    process.env.ABADA_WEB_BUILD_COMMAND = 'echo "Type error: boom" >&2; exit 3';
    const build = startWebBuild({ root, log });
    const err = await build.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebBuildError);
    expect((err as Error).message).toMatch(/failed \(exit 3\); its last lines:\nType error: boom/);
    expect(build.state()).toBe('failed');
    expect(webIsBuilt(root)).toBe(false);
    expect(existsSync(LOCK())).toBe(false);
  });

  it('stops with its whole process group and releases the lock', async () => {
    process.env.ABADA_WEB_BUILD_COMMAND = 'echo $$ > shell; sleep 60 & echo $! > sleeper; wait';
    const build = startWebBuild({ root, log });
    const pids = await waitFor('the stand-in build to start', () =>
      existsSync(path.join(root, 'sleeper')) && statSync(path.join(root, 'sleeper')).size > 0
        ? ['shell', 'sleeper'].map((f) => Number(readFileSync(path.join(root, f), 'utf8')))
        : null,
    );
    expect(JSON.parse(readFileSync(LOCK(), 'utf8'))).toMatchObject({ pid: process.pid });
    build.stop();
    await expect(build.done).rejects.toThrow(WebBuildError);
    expect(build.state()).toBe('stopped');
    await waitFor('the build’s processes to end', () => pids.every((p) => !alive(p)), 5_000);
    expect(existsSync(LOCK())).toBe(false);
  });
});
