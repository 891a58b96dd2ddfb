/**
 * Tool servers that fail (issue 14), with a real worker process and the demo CRM behind a fault-injecting
 * proxy (server/demo/mcp-faults.ts): an HTTP 503 before the tool runs, a 502 after it ran, a connection
 * closed mid-answer, a server that hangs past the tool timeout, one that answers slowly. Reads are tried
 * again with backoff; a keyed write is re-sent under the same key and the CRM makes one ticket; one stuck
 * call holds its own task only. Nothing lost, nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpFaultProxy, startMcpFaultProxy } from '../../server/demo/mcp-faults.js';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { CRM_SERVER, Q, SUPPORT_TRIAGE } from '../helpers/fixtures.js';
import {
  type Harness,
  instance,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from '../worker/helpers.js';

let h: Harness;
let proxy: McpFaultProxy;
let worker: WorkerProcess;

beforeAll(async () => {
  h = await startHarness({ script: supportTriageScript });
  proxy = await startMcpFaultProxy(h.crm.url);
  // a new version of the CRM server and the process, bound to the proxy
  await h.engine.ok(h.engine.adminToken, Q.deploy, { s: `${CRM_SERVER(proxy.url)}---${SUPPORT_TRIAGE}` });
  worker = spawnWorker(h, 'worker-mcp', {
    ABADA_WORKER_CONCURRENCY: '2',
    ABADA_TOOL_TIMEOUT_MS: '8000',
    ABADA_LOG_LEVEL: 'info',
  });
});
afterAll(async () => {
  worker?.kill('SIGKILL');
  await proxy?.close();
  await h?.close();
});

async function triaged(id: string) {
  return waitFor(
    `instance ${id} past triage`,
    async () => {
      const i = await instance(h, id);
      return i.currentNodeId === 'notify_customer' ? i : null;
    },
    60_000,
  );
}

const ticketsFor = (key: string) =>
  h.crm.sideEffects.filter((e) => e.tool === 'create_ticket' && e.key === key).length;

function writeStep(i: Awaited<ReturnType<typeof triaged>>) {
  const task = i.tasks.find((t) => t.nodeId === 'triage')!;
  expect(task.state).toBe('COMPLETED');
  expect(task.attempt).toBe(1);
  return task.steps.find((s) => s.toolRef === 'crm/create_ticket')!;
}

describe('MCP faults', () => {
  it('a read answered 503, then cut mid-answer, is tried again and the task completes', async () => {
    proxy.inject('get_customer', { fault: 'status', times: 1 });
    const id = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel 1' });
    await waitFor('the 503', () => proxy.seen.some((s) => s.tool === 'get_customer' && s.fault === 'status'));
    proxy.inject('get_customer', { fault: 'drop', times: 1 });
    const done = await triaged(id);
    const read = done.tasks[0].steps.find((s) => s.toolRef === 'crm/get_customer')!;
    expect(read.state).toBe('COMPLETED');
    const key = writeStep(done).idempotencyKey!;
    expect(ticketsFor(key)).toBe(1);
  });

  it('a keyed write whose answer is lost (502 after it ran, then cut mid-answer) is re-sent under the same key: one ticket', async () => {
    proxy.inject('create_ticket', { fault: 'status-after', status: 502, times: 1 });
    const id = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel 2' });
    await waitFor('the 502', () =>
      proxy.seen.some((s) => s.tool === 'create_ticket' && s.fault === 'status-after'),
    );
    proxy.inject('create_ticket', { fault: 'drop', times: 1 });
    const done = await triaged(id);
    const step = writeStep(done);
    expect(step.state).toBe('COMPLETED');
    const calls = h.crm.calls.filter(
      (c) => c.tool === 'create_ticket' && c.headerKey === step.idempotencyKey,
    );
    expect(calls.length).toBeGreaterThanOrEqual(3); // sent, re-sent, re-sent: every time with the key
    expect(calls.every((c) => c.metaKey === step.idempotencyKey)).toBe(true);
    expect(ticketsFor(step.idempotencyKey!)).toBe(1);
  });

  it('a server that hangs holds its own task only: another task completes meanwhile, then the hung read is tried again', async () => {
    proxy.inject('get_customer', { fault: 'hang', times: 1 });
    const a = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel 3' });
    await waitFor('the hung call', () => proxy.holding() === 1);
    const b = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel 4' });
    await triaged(b);
    expect(proxy.holding()).toBe(1); // b finished while a's call still hangs
    const done = await triaged(a);
    expect(ticketsFor(writeStep(done).idempotencyKey!)).toBe(1);
    const reads = proxy.seen.filter((s) => s.tool === 'get_customer');
    expect(reads.filter((s) => s.fault === 'hang')).toHaveLength(1);
  }, 60_000);

  it('a read answered 429 with Retry-After hands the task back for that long, then completes', async () => {
    proxy.inject('get_customer', { fault: 'status', status: 429, retryAfter: '1', times: 1 });
    const id = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel 6' });
    const done = await triaged(id);
    const deferred = done.history.filter((x) => x.eventType === 'TASK_DEFERRED');
    expect(deferred).toHaveLength(1);
    expect(deferred[0].data).toMatchObject({ retryAfterMs: 1000, deferrals: 1 });
    expect(String(deferred[0].data.reason)).toContain('tool server crm answered HTTP 429');
    // the same attempt, leased twice; the read ran once it was due, and nothing was spent
    expect(done.history.filter((x) => x.eventType === 'TASK_LEASED')).toHaveLength(2);
    expect(done.history.some((x) => x.eventType === 'ATTEMPT_FAILED')).toBe(false);
    const read = done.tasks[0].steps.filter((s) => s.toolRef === 'crm/get_customer');
    expect(read.map((s) => s.state)).toEqual(['COMPLETED']);
    expect(ticketsFor(writeStep(done).idempotencyKey!)).toBe(1);
  });

  it('a slow answer within the timeout is waited for, not sent twice', async () => {
    const before = proxy.seen.filter((s) => s.tool === 'create_ticket').length;
    proxy.inject('create_ticket', { fault: 'slow', ms: 1500, times: 1 });
    const id = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel 5' });
    const done = await triaged(id);
    expect(proxy.seen.filter((s) => s.tool === 'create_ticket').length - before).toBe(1);
    expect(ticketsFor(writeStep(done).idempotencyKey!)).toBe(1);
  });
});
