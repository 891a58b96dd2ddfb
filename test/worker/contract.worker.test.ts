/**
 * The contract check before the model sees a function: a renamed tool, or an input schema whose SHA-256
 * no longer matches the definition's pin, fails the attempt TOOL_CONTRACT_MISMATCH without calling the
 * model; a binding outside the worker's ABADA_AGENT_ALLOWED_TOOLS fails TOOL_NOT_ALLOWED. These run the
 * worker in-process through `startWorker` (the same code the CLI runs).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../server/shared/canonical.js';
import { workerConfig } from '../../server/worker/config.js';
import { startWorker, type WorkerHandle } from '../../server/worker/loop.js';
import { Q } from '../helpers/fixtures.js';
import { CRM_SECRET, type Harness, instance, startHarness, startProcess, waitFor } from './helpers.js';

let h: Harness;
let worker: WorkerHandle | null = null;

const PINNED = (url: string, pin: string) => `
kind: ToolServer
name: crm-pinned
transport: streamable-http
url: ${url}
credential: crm-token
tools:
  get_customer: { policy: read }
  create_ticket: { policy: write, idempotency: key, input_schema_sha256: ${pin} }
---
kind: Process
key: pinned-triage
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [crm-pinned/get_customer, crm-pinned/create_ticket]
    result_variable: triage
    max_attempts: 1
    next: done
  - { id: done, type: end }
`;

async function liveSchemaSha(url: string, tool: string): Promise<string> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${CRM_SECRET}` } },
    }),
  );
  const { tools } = await client.listTools();
  await client.close();
  return sha256Hex(canonicalJson(tools.find((t) => t.name === tool)!.inputSchema));
}

async function run(allowedTools: string[] | null = null) {
  worker = await startWorker(
    workerConfig({
      engineUrl: h.engine.url,
      token: h.workerToken,
      workerId: `in-process-${Math.random().toString(36).slice(2, 8)}`,
      modelBaseUrl: h.model.url,
      pollMs: 1000,
      lockMs: 5000,
      allowedTools,
      logLevel: 'silent',
    }),
  );
}

/** Waits until the triage task's attempt failed with errorType (ATTEMPT_FAILED or TASK_FAILED). */
async function failedWith(id: string, errorType: string) {
  return waitFor(`a ${errorType} failure`, async () => {
    const i = await instance(h, id);
    const e = i.history.find(
      (x) =>
        (x.eventType === 'ATTEMPT_FAILED' || x.eventType === 'TASK_FAILED') &&
        x.data?.errorType === errorType,
    );
    // the attempt may be retried first: wait for the task to end FAILED, not just for a failed attempt
    const t = i.tasks[0];
    return e && t?.state === 'FAILED' && t.errorType === errorType ? i : null;
  });
}

beforeAll(async () => {
  h = await startHarness();
  const sha = await liveSchemaSha(h.crm.url, 'create_ticket');
  await h.engine.ok(h.engine.adminToken, Q.deploy, { s: PINNED(h.crm.url, sha) });
});
afterEach(async () => {
  await worker?.stop();
  worker = null;
});
afterAll(() => h?.close());

const ALICE = { customerId: 'C-42', message: 'My parcel never arrived' };

describe('the tool contract check', () => {
  it('a pinned schema that still matches runs; once altered the attempt fails TOOL_CONTRACT_MISMATCH', async () => {
    await run();
    const ok = await startProcess(h, 'pinned-triage', ALICE);
    await waitFor(
      'the pinned process to complete',
      async () => (await instance(h, ok)).state === 'COMPLETED',
    );
    h.model.reset();
    h.crm.alterSchema('create_ticket');
    try {
      const id = await startProcess(h, 'pinned-triage', ALICE);
      const inst = await failedWith(id, 'TOOL_CONTRACT_MISMATCH');
      expect(inst.tasks[0]).toMatchObject({ state: 'FAILED', errorType: 'TOOL_CONTRACT_MISMATCH' });
      expect(inst.tasks[0].errorMessage).toContain('crm-pinned/create_ticket');
      expect(inst.tasks[0].errorMessage).toContain('pins');
      expect(inst.tasks[0].steps).toEqual([]);
      expect(h.model.callCount).toBe(0);
    } finally {
      h.crm.alterSchema('create_ticket', false);
    }
  }, 30_000);

  it('a renamed tool fails the attempt TOOL_CONTRACT_MISMATCH without calling the model', async () => {
    h.model.reset();
    h.crm.renameTool('create_ticket', 'open_ticket');
    try {
      await run();
      const id = await startProcess(h, 'support-triage', ALICE);
      const inst = await failedWith(id, 'TOOL_CONTRACT_MISMATCH');
      const failed = inst.history.find((e) => e.eventType === 'ATTEMPT_FAILED')!;
      expect(failed.attempt).toBe(1);
      expect(h.model.callCount).toBe(0);
      expect(h.crm.countCalls()).toBe(0);
    } finally {
      h.crm.renameTool('create_ticket', 'create_ticket');
    }
  }, 30_000);

  it('a binding outside ABADA_AGENT_ALLOWED_TOOLS fails TOOL_NOT_ALLOWED', async () => {
    h.model.reset();
    await run(['crm/get_customer', 'billing']);
    const id = await startProcess(h, 'support-triage', ALICE);
    const inst = await failedWith(id, 'TOOL_NOT_ALLOWED');
    const failed = inst.history.find((e) => e.data?.errorType === 'TOOL_NOT_ALLOWED')!;
    expect(failed.attempt).toBe(1);
    expect(h.model.callCount).toBe(0);
  }, 30_000);
});
