import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The layering rules of `.dependency-cruiser.cjs`, applied to a fixture tree built to break each of them
 * once (test/fixtures/layering/README.md). The real config runs through the real CLI from the fixture's
 * root, so a rule whose pattern stops matching fails here instead of passing silently in `npm run lint`.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixture = path.join(root, 'test/fixtures/layering');
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

type Violation = { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] };

async function cruiseFixture(): Promise<Violation[]> {
  const args = [depcruise, 'server', 'web', '--config', path.join(root, '.dependency-cruiser.cjs')];
  // The CLI exits non-zero when it finds violations, which is what this fixture is for.
  const { stdout } = await promisify(execFile)(process.execPath, [...args, '--output-type', 'json'], {
    cwd: fixture,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return JSON.parse(stdout).summary.violations;
}

describe('layering rules (dependency-cruiser)', () => {
  let violations: Violation[];
  beforeAll(async () => {
    violations = await cruiseFixture();
  });

  it('reports each forbidden import and the cycle in the fixture, by rule, and nothing else', () => {
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    expect(found).toEqual(
      [
        'auth-not-to-db: server/auth/session.ts → server/db/schema.ts',
        'db-imports-nothing-above: server/db/schema.ts → server/engine/journal/index.ts',
        'engine-not-to-auth: server/engine/approvals/signin.ts → server/auth/cookies.ts',
        'engine-folders-through-index: server/engine/approvals/decide.ts → server/engine/journal/store.ts',
        'engine-through-index-from-outside: server/graphql/schema.ts → server/engine/approvals/decide.ts',
        'graphql-not-to-db: server/graphql/schema.ts → server/db/schema.ts',
        'no-circular: server/engine/journal/rules.ts → server/engine/journal/store.ts',
        'telemetry-is-a-leaf: server/telemetry/spans.ts → server/engine/journal/index.ts',
        'web-not-to-server: web/page.ts → server/graphql/schema.ts',
        'worker-not-to-engine-or-db: server/worker/loop.ts → server/engine/journal/index.ts',
      ].sort(),
    );
    // Both sides of the cycle are type-only imports: they count as dependencies all the same.
    const cycle = violations.find((v) => v.rule.name === 'no-circular');
    expect(cycle?.cycle?.map((step) => step.name)).toEqual([
      'server/engine/journal/store.ts',
      'server/engine/journal/rules.ts',
    ]);
  });

  it('every rule in the config is one the fixture breaks, so none goes untested', () => {
    const config = createRequire(import.meta.url)(path.join(root, '.dependency-cruiser.cjs'));
    const violated = new Set(violations.map((v) => v.rule.name));
    // An unresolvable import would break `tsc` on the fixture, so that one rule is not exercised here.
    const untested = config.forbidden
      .map((rule: { name: string }) => rule.name)
      .filter((name: string) => name !== 'not-to-unresolvable' && !violated.has(name));
    expect(untested).toEqual([]);
  });
});
