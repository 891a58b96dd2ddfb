/**
 * `npm test`'s first step (scripts/setup-test-deps.sh) where it cannot install: it names every missing
 * package and the command, and stops at once. ABADA_SETUP_ROOT plays a machine that lacks everything;
 * installing itself is not tested here (it changes the machine: see the README for what it printed).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SCRIPT = 'scripts/setup-test-deps.sh';
const PACKAGES = 'chromium prometheus postgresql-15 postgresql-client-15';

function run(env: Record<string, string | undefined>, prefix: string[] = []) {
  const [file, ...args] = [...prefix, '/bin/bash', SCRIPT];
  return spawnSync(file!, args, { env: env as NodeJS.ProcessEnv, encoding: 'utf8' });
}

describe('the test set-up step, where it cannot install', () => {
  it('without apt-get: names the packages, what needs them and the command, and exits 1', () => {
    const r = run({ ABADA_SETUP_ROOT: '/nonexistent', PATH: '/nonexistent' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe(
      `[setup:test] npm test needs the Debian packages ${PACKAGES} and cannot install them (no apt-get on this machine):`,
    );
    expect(lines).toContain(
      '[setup:test]   chromium: /usr/bin/chromium is missing, needed by the Playwright dashboard tests (test/e2e/)',
    );
    expect(lines).toContain(
      '[setup:test]   postgresql-client-15: /usr/lib/postgresql/15/bin/pg_dump is missing, needed by ' +
        'test/faults/backup.restore.test.ts',
    );
    expect(lines.at(-1)).toBe(
      `[setup:test] install them, then run npm test again: apt-get update && apt-get install -y ${PACKAGES}`,
    );
  });

  const asNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
  it.skipIf(!asNobody)('not as root: says so and gives the command with sudo', () => {
    const r = run({ ABADA_SETUP_ROOT: '/nonexistent', PATH: process.env.PATH }, [
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('cannot install them (not running as root):');
    expect(r.stderr).toContain(`sudo apt-get update && sudo apt-get install -y ${PACKAGES}`);
  });

  const present = [
    '/usr/bin/chromium',
    '/usr/bin/promtool',
    '/usr/lib/postgresql/15/bin/postgres',
    '/usr/lib/postgresql/15/bin/pg_dump',
  ].every((f) => existsSync(f));
  it.skipIf(!present)('prints nothing and exits 0 when everything is there', () => {
    const r = run({ PATH: process.env.PATH });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
  });
});
