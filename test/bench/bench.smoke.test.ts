/** The bench's smoke run: every section works end to end. It asserts no timing (machines are noisy). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('npm run bench (smoke)', () => {
  it('measures every figure against its baseline and writes the JSON', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('journalStep commits/s');
    const json = JSON.parse(readFileSync('bench/results/smoke.json', 'utf8'));
    expect(json.table.map((x: { figure: string }) => x.figure)).toHaveLength(9);
    for (const x of json.table) expect(Number.isFinite(x.ratio), x.figure).toBe(true);
    expect(json.fanOut.map((f: { subscribers: number }) => f.subscribers)).toEqual([1, 10]);
    for (const f of json.fanOut) expect(f.received).toBe(f.expected);
  }, 300_000);
});
