/**
 * What the dashboard's paths answer before Next.js serves them (server/web/handler.ts): while the build
 * runs, a 503 page that says so (Retry-After, a status region, a reload without JavaScript too); after a
 * failed build, a 500 page that says so. The demo's sign-in list does not wait for the build. A stand-in
 * build (ABADA_WEB_BUILD_COMMAND) on a small checkout of its own keeps it to milliseconds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Dashboard, startDashboard } from '../../server/web/index.js';

let root: string;
let dashboard: Dashboard | null = null;
let server: http.Server | null = null;
const lines: string[] = [];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'abada-start-page-'));
  mkdirSync(path.join(root, 'web/app'), { recursive: true });
  writeFileSync(path.join(root, 'schema.graphql'), 'type Query { ping: String }\n');
  writeFileSync(path.join(root, 'web/app/page.tsx'), 'export default () => null;\n');
  lines.length = 0;
});
afterEach(async () => {
  dashboard?.close();
  await dashboard?.ready.catch(() => {});
  await new Promise((r) => (server ? server.close(r) : r(null)));
  delete process.env.ABADA_WEB_BUILD_COMMAND;
  rmSync(root, { recursive: true, force: true });
});

/** The dashboard's handler on a port of its own, as the engine mounts it. */
async function serve(buildCommand: string): Promise<string> {
  process.env.ABADA_WEB_BUILD_COMMAND = buildCommand;
  dashboard = startDashboard({
    dev: false,
    root,
    log: (l) => lines.push(l),
    demoUsers: () => [{ name: 'fiona', role: 'finance lead', token: 't' }],
  });
  const handle = dashboard.handle;
  server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the dashboard before Next.js serves it', () => {
  it('answers every dashboard path 503 with a page that says it is being built', async () => {
    const url = await serve('exec sleep 60');
    expect(dashboard!.building()).toBe(true);
    expect(lines.join('\n')).toContain('until the dashboard is ready, / says so');
    for (const p of ['/', '/approvals/123?x=1']) {
      const res = await fetch(`${url}${p}`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const html = await res.text();
      expect(html).toContain('<html lang="en">');
      expect(html).toContain('<h1>Building the dashboard…</h1>');
      expect(html).toContain('<div role="status">');
      expect(html).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>');
    }
    const head = await fetch(`${url}/`, { method: 'HEAD' });
    expect(head.status).toBe(503);
    expect(await head.text()).toBe('');
    const users = await fetch(`${url}/demo/users.json`);
    expect(users.status).toBe(200);
    expect(await users.json()).toEqual([{ name: 'fiona', role: 'finance lead', token: 't' }]);
  });

  it('answers 500 with a page that says the build failed, and logs why', async () => {
    const url = await serve('echo "Module not found: ./nope" >&2; exit 2');
    await expect(dashboard!.ready).rejects.toThrow(/failed \(exit 2\)/);
    const res = await fetch(`${url}/`);
    expect(res.status).toBe(500);
    expect(res.headers.get('retry-after')).toBeNull();
    const html = await res.text();
    expect(html).toContain('<h1>The dashboard could not be built</h1>');
    expect(html).not.toContain('location.reload');
    expect(lines.join('\n')).toMatch(/failed \(exit 2\); its last lines:\nModule not found: \.\/nope/);
  });
});
