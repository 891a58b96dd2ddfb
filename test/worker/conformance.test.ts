/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, client mode) against the worker's own
 * MCP client (test/worker/conformance/client.ts wraps server/worker/mcp.ts). Every client scenario the
 * suite knows is run with the committed expected-failures file: a scenario not listed must pass, and a
 * listed one must still fail (the CLI exits 1 on a stale entry). Scenarios not about OAuth run one after
 * another (sse-retry measures the client's reconnection delay, which a loaded CPU would blur); the OAuth
 * ones, expected to fail at their 401, run by suite.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bundled } from '../helpers/bundles.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIR = path.join(ROOT, 'test/worker/conformance');
const EXPECTED = path.join(DIR, 'expected-failures.yml');
const CLI = [
  '--import',
  path.join(DIR, 'node20.mjs'),
  path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
];
// the client (client.ts) bundled for the run: each scenario starts it afresh (test/helpers/bundles.ts)
const CLIENT = `node ${bundled('conformanceClient').join(' ')}`;
const OUT = mkdtempSync(path.join(tmpdir(), 'abada-conformance-'));
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

function conformance(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    let output = '';
    p.stdout.on('data', (d) => {
      output += d;
    });
    p.stderr.on('data', (d) => {
      output += d;
    });
    p.on('close', (code) => resolve({ code, output }));
  });
}

/** One scenario; the worker's elicitation setting is `defaults` unless given (server/worker/elicitation.ts). */
const runScenario = (
  scenario: string,
  elicitation = 'defaults',
  expectedFile: string[] = ['--expected-failures', EXPECTED],
) =>
  conformance(
    ['client', '--command', CLIENT, '--scenario', scenario, ...expectedFile, '--timeout', '30000', '-o', OUT],
    { ABADA_MCP_ELICITATION: elicitation },
  );

async function clientScenarios(): Promise<string[]> {
  const { code, output } = await conformance(['list', '--client']);
  expect(code).toBe(0);
  return [...output.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
}

const expected: string[] = parse(readFileSync(EXPECTED, 'utf8')).client;

describe('MCP conformance of the worker’s client', () => {
  it('passes every scenario that is not about OAuth (elicitation with ABADA_MCP_ELICITATION=defaults)', async () => {
    const scenarios = (await clientScenarios()).filter((s) => !s.startsWith('auth/'));
    expect(scenarios).toEqual(
      expect.arrayContaining([
        'initialize',
        'tools_call',
        'sse-retry',
        'elicitation-sep1034-client-defaults',
      ]),
    );
    const failedUnexpectedly: string[] = [];
    for (const s of scenarios) {
      let r = await runScenario(s);
      // sse-retry times the reconnection against a ±200 ms window; the client waits exactly `retry` ms
      // (a timer), so a miss means a stalled machine, not a wrong client: it gets one more run.
      if (r.code !== 0 && s === 'sse-retry') r = await runScenario(s);
      if (r.code !== 0) failedUnexpectedly.push(`${s}:\n${r.output.slice(-2000)}`);
    }
    expect(failedUnexpectedly).toEqual([]);
    expect(expected.filter((s) => !s.startsWith('auth/'))).toEqual([]);
  }, 180_000);

  it('by default the worker does not answer elicitation: the defaults scenario fails at "Method not found"', async () => {
    const r = await runScenario('elicitation-sep1034-client-defaults', 'none', []);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/Method not found/);
  }, 60_000);

  it('fails the OAuth scenarios only as the file says (passing ones unlisted, failing ones listed)', async () => {
    const scenarios = (await clientScenarios()).filter((s) => s.startsWith('auth/'));
    expect(scenarios.length).toBeGreaterThan(0);
    // The suites that hold them, each run by one CLI (its scenarios in parallel): far cheaper than a
    // CLI per scenario. Every OAuth scenario must have run in one of them.
    const ran = new Set<string>();
    const failures: string[] = [];
    for (const suite of ['auth', 'backcompat', 'draft', 'extensions']) {
      const r = await conformance([
        'client',
        '--command',
        CLIENT,
        '--suite',
        suite,
        '--expected-failures',
        EXPECTED,
        '-o',
        OUT,
      ]);
      for (const m of r.output.matchAll(/^[✓✗] (\S+): /gm)) ran.add(m[1]);
      if (r.code !== 0) failures.push(`${suite}:\n${r.output.slice(-2000)}`);
    }
    expect(failures).toEqual([]);
    expect(scenarios.filter((s) => !ran.has(s))).toEqual([]);
  }, 240_000);
});
