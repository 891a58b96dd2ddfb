/**
 * Two engines started at once from one checkout without a build (the README's several-engines set-up):
 * one builds the dashboard — a real `next build` — the other waits for that build, and both then serve
 * it. Afterwards `schema.graphql` rewritten with its own text is not a change: the next start serves the
 * same build at once. The engines share a database of the run (DATABASE_URL), as several engines do.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/client.js';
import { webIsBuilt } from '../../server/web/index.js';
import { copyWorkingTree, killLeftoverBuild, type Started, startEnv, startIn } from '../helpers/checkout.js';
import { createTestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
let checkout: string;
let databaseUrl: string;
const started: Started[] = [];
const key = randomBytes(32).toString('base64');

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'abada-start-'));
  chmodSync(dir, 0o755);
  checkout = path.join(dir, 'abada');
  copyWorkingTree(checkout);
  databaseUrl = await createTestDatabase();
});

afterAll(() => {
  for (const s of started) s.kill();
  if (checkout) killLeftoverBuild(checkout);
  rmSync(dir, { recursive: true, force: true });
});

/** An engine of the copy on its own port: the engine's node process itself, so SIGTERM reaches it. */
async function startEngine(): Promise<Started & { url: string }> {
  const port = await freePort();
  const s = startIn(
    checkout,
    [process.execPath, '--import', 'tsx', 'server/main.ts'],
    startEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ABADA_ENCRYPTION_KEY: key }),
  );
  started.push(s);
  return { ...s, url: `http://127.0.0.1:${port}` };
}

/** Waits for `/` to answer the dashboard itself (Next.js's page, not the building page). */
async function dashboardServed(engine: Started & { url: string }, ms: number) {
  await waitFor(
    `the dashboard at ${engine.url}/`,
    async () => {
      if (engine.child.exitCode !== null) throw new Error(`the engine exited ${engine.child.exitCode}`);
      const res = await fetch(`${engine.url}/`).catch(() => null);
      return res?.status === 200 && (await res.text()).includes('/_next/static/');
    },
    ms,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; it printed:\n${engine.output()}`);
  });
}

async function stop(engine: Started) {
  engine.child.kill('SIGTERM');
  expect(await engine.exited, engine.output()).toBe(0);
}

describe('two engines started at once on one checkout', () => {
  it('build the dashboard once and both serve it; an unchanged schema.graphql rebuilds nothing', async () => {
    const [a, b] = await Promise.all([startEngine(), startEngine()]);
    // the real build: about half a minute on two cores, longer while other tests run
    await Promise.all([dashboardServed(a, 240_000), dashboardServed(b, 240_000)]);
    const outputs = [a.output(), b.output()];
    const builders = outputs.filter((o) => o.includes('[abada] building the dashboard'));
    expect(builders, outputs.join('\n----\n')).toHaveLength(1);
    const [builder, waiter] = builders[0] === outputs[0] ? [a, b] : [b, a];
    expect(waiter.output()).toContain(
      `another process of this checkout (pid ${builder.child.pid}) is building`,
    );
    expect(waiter.output()).not.toContain('[abada] building the dashboard');
    expect(outputs.every((o) => o.includes('[abada] dashboard ready at'))).toBe(true);
    expect(webIsBuilt(checkout)).toBe(true);
    await Promise.all([stop(a), stop(b)]);

    const buildId = path.join(checkout, 'web/.next/BUILD_ID');
    const builtAt = statSync(buildId).mtimeMs;
    const schema = path.join(checkout, 'schema.graphql');
    writeFileSync(schema, readFileSync(schema));
    utimesSync(schema, new Date(), new Date(Date.now() + 60_000));

    const again = await startEngine();
    await dashboardServed(again, 30_000);
    expect(again.output()).not.toContain('building the dashboard');
    expect(statSync(buildId).mtimeMs).toBe(builtAt);
    await stop(again);
  }, 300_000);
});
