/**
 * `abada principal list|update|disable|rotate` as an operator runs them: a real child process against a
 * running engine. --json parses; a rotated token stops and the new one works; a disabled principal's
 * token exits 3 (not authenticated); the last admin is refused with exit 1; bad usage exits 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { abada } from './cli-helpers.js';

let engine: TestEngine;
let admin: Record<string, string>;

beforeAll(async () => {
  engine = await startTestEngine();
  admin = { ABADA_URL: engine.url, ABADA_TOKEN: engine.adminToken };
});
afterAll(() => engine?.close());

async function created(args: string[]) {
  const r = await abada(['principal', 'create', ...args, '--json'], admin);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { token: string; principal: { id: string } };
}

describe('abada principal', () => {
  it('lists, updates, rotates and disables', async () => {
    const h = await created(['--kind', 'human', '--name', 'cli-fiona', '--group', 'finance']);
    await created(['--kind', 'worker', '--name', 'cli-bot', '--topic', 'mail']);
    const human = { ABADA_URL: engine.url, ABADA_TOKEN: h.token };

    const list = await abada(['principal', 'list', '--kind', 'human', '--json'], admin);
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout);
    expect(listed.principals.map((p: { name: string }) => p.name)).toEqual(['cli-fiona']);
    expect(listed).toMatchObject({ totalCount: 1, hasNextPage: false });
    const text = await abada(['principal', 'list', '--first', '1'], admin);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/cli-bot\s+default\s+enabled\s+mail/);
    expect(text.stdout).toContain('next page: --after ');

    const upd = await abada(
      ['principal', 'update', h.principal.id, '--group', 'finance', '--group', 'finance-leads', '--json'],
      admin,
    );
    expect(upd.code, upd.stderr).toBe(0);
    expect(JSON.parse(upd.stdout).groups).toEqual(['finance', 'finance-leads']);

    const rot = await abada(['principal', 'rotate', h.principal.id], admin);
    expect(rot.code, rot.stderr).toBe(0);
    expect(rot.stderr).toContain('the old one no longer works');
    const fresh = rot.stdout.trim();
    expect(fresh).toMatch(/^abada_\S{20,}$/);
    expect((await abada(['approvals'], human)).code).toBe(3);
    expect((await abada(['approvals'], { ...human, ABADA_TOKEN: fresh })).code).toBe(0);

    const dis = await abada(['principal', 'disable', h.principal.id, '--json'], admin);
    expect(dis.code, dis.stderr).toBe(0);
    expect(JSON.parse(dis.stdout)).toMatchObject({ id: h.principal.id, disabled: true });
    const refused = await abada(['approvals', '--json'], { ...human, ABADA_TOKEN: fresh });
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout).error.message).toMatch(/was disabled/);
  });

  it('refuses the last admin (exit 1), unknown ids (exit 1) and bad usage (exit 2)', async () => {
    const solo = await created(['--kind', 'admin', '--name', 'cli-solo', '--project', 'cli-solo']);
    const self = await abada(['principal', 'disable', solo.principal.id, '--json'], {
      ...admin,
      ABADA_TOKEN: solo.token,
    });
    expect(self.code).toBe(1);
    expect(JSON.parse(self.stdout).error).toMatchObject({ code: 'VALIDATION_FAILED' });
    const missing = await abada(['principal', 'rotate', '00000000-0000-0000-0000-000000000000'], admin);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('NOT_FOUND');
    expect((await abada(['principal', 'update', solo.principal.id], admin)).code).toBe(2);
    expect((await abada(['principal', 'frobnicate'], admin)).code).toBe(2);
    expect((await abada(['principal', 'list', '--kind', 'robot'], admin)).code).toBe(2);
  });
});
