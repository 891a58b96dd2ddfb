/**
 * The integrators' client: `npm run client:build` builds server/client to dist/client (JavaScript and
 * declarations), `abada/client` resolves through the package's `exports`, its declarations type a
 * consumer's code (a wrong field is a compile error), and docs/custom-worker.md's worker — the file
 * docs/examples/custom-worker.mjs, which the page shows verbatim — runs with plain `node` against a
 * real engine and a model endpoint: it journals the model call and completes the task.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, startModelServer } from '../../server/demo/model-server.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXAMPLE = path.join(ROOT, 'docs/examples/custom-worker.mjs');

const SUMMARY = `
kind: Process
key: summary
variables: { ticket: { type: string, required: true } }
start: summarize
nodes:
  - id: summarize
    type: agent
    model: gemini-3.6-flash
    prompt: Summarize the ticket in one sentence and answer in JSON.
    inputs:
      ticket: \${ticket}
    result_variable: summary
    output_schema: { type: object, required: [text] }
    max_attempts: 1
    next: done
  - { id: done, type: end }
`;

let engine: TestEngine;
let model: ModelServer;
let worker: ChildProcess | null = null;

beforeAll(async () => {
  const build = spawnSync('npm', ['run', 'client:build'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, `${build.stdout}${build.stderr}`).toBe(0);
  [engine, model] = await Promise.all([
    startTestEngine(),
    startModelServer({
      script: () => ({ content: JSON.stringify({ text: 'The parcel never arrived.', _confidence: 90 }) }),
    }),
  ]);
  await engine.ok(engine.adminToken, Q.deploy, { s: SUMMARY });
}, 120_000);
afterAll(async () => {
  worker?.kill('SIGKILL');
  await Promise.allSettled([engine?.close(), model?.close()]);
});

describe('abada/client for integrators', () => {
  it('docs/custom-worker.md shows the example file verbatim, in under 80 lines', () => {
    const code = readFileSync(EXAMPLE, 'utf8');
    expect(readFileSync(path.join(ROOT, 'docs/custom-worker.md'), 'utf8')).toContain(
      `\`\`\`js\n${code}\`\`\``,
    );
    expect(code.trimEnd().split('\n').length).toBeLessThan(80);
  });

  it('runs the example with plain node against a real engine: journaled and completed', async () => {
    const token = await engine.principal('WORKER', 'my-loop', { topics: ['abada:agent'] });
    const proc = spawn(process.execPath, [EXAMPLE], {
      cwd: ROOT,
      env: {
        ...process.env,
        ABADA_URL: engine.url,
        ABADA_TOKEN: token,
        ABADA_WORKER_ID: 'my-loop-1',
        MODEL_BASE_URL: model.url,
        MODEL_API_KEY: 'not-checked',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker = proc;
    let stderr = '';
    proc.stderr?.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));

    const { startProcess } = await engine.ok(engine.adminToken, Q.start, {
      key: 'summary',
      v: { ticket: 'My parcel never arrived' },
    });
    const done = await waitFor(`the instance to complete (worker stderr: ${stderr})`, async () => {
      const { processInstance } = await engine.ok(
        engine.adminToken,
        `query($id: ID!) { processInstance(id: $id) { state variables
           tasks { state workerId steps { sequence kind state model usage } } } }`,
        { id: startProcess.id },
      );
      return processInstance.state === 'COMPLETED' && processInstance;
    });
    expect(done.variables.summary).toEqual({ text: 'The parcel never arrived.' }); // _confidence is gated, not stored
    expect(done.tasks[0].steps).toMatchObject([
      { sequence: 1, kind: 'MODEL_CALL', state: 'COMPLETED', model: 'gemini-3.6-flash' },
    ]);
    expect(model.callCount).toBe(1);

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    worker = null;
  }, 60_000);

  it("types a consumer's code from the built declarations", () => {
    const dir = mkdtempSync(path.join(ROOT, 'dist/consumer-'));
    const file = path.join(dir, 'consumer.ts');
    writeFileSync(
      file,
      `import { FetchAndLock, type ResultOf } from 'abada/client';
type Task = ResultOf<typeof FetchAndLock>['fetchAndLock'][number];
export const resultVariable = (t: Task): string | undefined => t.agentWork?.resultVariable.toUpperCase();
// @ts-expect-error: a field the schema does not have
export const wrong = (t: Task) => t.agentWork?.notAField;
`,
    );
    const tsc = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        file,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    rmSync(dir, { recursive: true, force: true });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);
  }, 120_000);
});
