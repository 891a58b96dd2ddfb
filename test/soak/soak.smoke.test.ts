/**
 * The soak's short run (`soak/run.ts --smoke`) as a child process: ~20 instances of seeds 002 and 000
 * through two engines and three worker processes, with workers SIGKILLed (also mid-write), an engine
 * restarted, approvals decided and cancelled, unknown outcomes resolved. Every guarantee must hold.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

function runSmoke(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'soak/run.ts', '--smoke'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), 170_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm run soak (smoke)', () => {
  it('ends every instance under faults with no violated guarantee', async () => {
    const r = await runSmoke();
    const line = r.stdout.split('\n').find((l) => l.startsWith('SOAK_JSON '));
    expect(line, `${r.stdout}\n${r.stderr.slice(-3000)}`).toBeDefined();
    const json = JSON.parse(line!.slice('SOAK_JSON '.length));
    const f = json.figures;
    expect(r.code, r.stdout).toBe(0);
    expect(json.violations).toBe(0);
    expect(json.rows.every((row: { violations: number }) => row.violations === 0)).toBe(true);
    // Every instance ended; the faults did happen.
    expect(f.started).toBe(json.instances);
    expect(f.stillRunning).toBe(0);
    expect(f.failed).toBe(0);
    expect(f.kills).toBeGreaterThan(0);
    expect(f.engineRestarts).toBe(1);
    // and the faults around the engine (soak/faults.ts)
    expect(f.pgKills).toBe(1);
    expect(f.mcpFaults).toBeGreaterThan(0);
    expect(f.partitions).toBeGreaterThan(0);
    // Zero-violation figures.
    expect(f.duplicates).toBe(0);
    expect(f.lost).toBe(0);
    expect(f.keyedFound).toBe(f.keyedExpected);
    expect(f.keylessSentTwice).toBe(0);
    expect(f.doubleLeases).toBe(0);
    expect(f.journalWritesWithoutLease).toBe(0);
    expect(f.modelCalls).toBeLessThanOrEqual(f.modelBound);
    expect(f.auditBroken).toBe(0);
    expect(f.openIncidents).toBe(0);
    expect(f.pendingApprovals).toBe(0);
  }, 180_000);
});
