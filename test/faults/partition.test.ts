/**
 * Partitions (issue 14), through a real TCP proxy (test/helpers/proxy.ts) and real worker processes.
 *
 * Worker ↔ engine: worker A, whose keyed write keeps timing out at a hung tool server, loses the engine
 * (blackhole). Its lease runs out on the engine's clock; worker B takes the task over on the same attempt
 * and finishes it with the same key. A sends nothing to the tool once its lease may have lapsed — judged
 * by its local deadline, not by asking the engine — and a late report from A is refused LEASE_NOT_HELD.
 *
 * Worker ↔ tool: the connection to the CRM is cut while the CRM holds a write's answer (the ticket is
 * made). The worker re-sends under the same key once the network is back: one ticket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpFaultProxy, startMcpFaultProxy } from '../../server/demo/mcp-faults.js';
import { supportTriageScript } from '../../server/demo/scripts.js';
import { codeOf } from '../helpers/engine.js';
import { CRM_SERVER, Q, SUPPORT_TRIAGE } from '../helpers/fixtures.js';
import { startTcpProxy, type TcpProxy } from '../helpers/proxy.js';
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
let faults: McpFaultProxy;
let engineLink: TcpProxy;
let toolLink: TcpProxy;
const procs: WorkerProcess[] = [];
const LOCK_MS = 3000;

beforeAll(async () => {
  h = await startHarness({ script: supportTriageScript });
  faults = await startMcpFaultProxy(h.crm.url);
  engineLink = await startTcpProxy({ port: h.engine.port });
  toolLink = await startTcpProxy({ port: Number(new URL(faults.url).port) });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await Promise.allSettled([engineLink?.close(), toolLink?.close(), faults?.close()]);
  await h?.close();
});

function worker(id: string, url: string) {
  const w = spawnWorker(h, id, {
    ABADA_URL: url,
    ABADA_WORKER_LOCK_MS: String(LOCK_MS),
    ABADA_TOOL_TIMEOUT_MS: '1000',
    ABADA_LOG_LEVEL: 'info',
  });
  procs.push(w);
  return w;
}

async function deployThrough(mcpUrl: string) {
  await h.engine.ok(h.engine.adminToken, Q.deploy, { s: `${CRM_SERVER(mcpUrl)}---${SUPPORT_TRIAGE}` });
}

const TASK = `query($id: ID!) { externalTask(id: $id) { id state attempt workerId lockExpiresAt } }`;

describe('partitions', () => {
  it('worker ↔ engine: the cut-off worker stops sending at its local deadline, another takes over, late reports are refused', async () => {
    await deployThrough(faults.url);
    faults.inject('create_ticket', { fault: 'hang', times: Number.POSITIVE_INFINITY });
    const a = worker('worker-a', engineLink.url);
    const id = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel lost' });
    await waitFor('A sends the write', () => faults.seen.some((s) => s.tool === 'create_ticket'));
    engineLink.blackhole();
    const taskId = (await instance(h, id)).tasks[0].id;
    // the lease as the engine last extended it (extensions no longer get through)
    await new Promise((r) => setTimeout(r, 300));
    const leaseEnd = Date.parse(
      (await h.engine.ok(h.engine.adminToken, TASK, { id: taskId })).externalTask.lockExpiresAt,
    );
    await waitFor('A gives the task up', () => a.logs.some((l) => l.event === 'task.dropped'), 20_000);
    const sentByA = faults.seen.filter((s) => s.tool === 'create_ticket');
    expect(sentByA.length).toBeGreaterThanOrEqual(1);
    // nothing went to the tool once A's lease may have lapsed
    for (const s of sentByA) expect(s.at).toBeLessThan(leaseEnd);
    const lapsed = a.logs.find((l) => l.event === 'task.dropped');
    expect(String(lapsed?.reason)).toMatch(/lease may have lapsed|lease lost/);

    // B takes the task over on the same attempt and finishes it under the same key
    faults.clear();
    worker('worker-b', h.engine.url);
    const done = await waitFor(
      'B completes the task',
      async () => {
        const i = await instance(h, id);
        return i.currentNodeId === 'notify_customer' ? i : null;
      },
      30_000,
    );
    const task = done.tasks[0];
    expect(task.attempt).toBe(1);
    const write = task.steps.find((s) => s.toolRef === 'crm/create_ticket')!;
    expect(write.state).toBe('COMPLETED');
    expect(h.crm.sideEffects.filter((e) => e.tool === 'create_ticket')).toHaveLength(1);
    expect(h.crm.sideEffects.find((e) => e.tool === 'create_ticket')!.key).toBe(write.idempotencyKey);
    expect(faults.seen.filter((s) => s.tool === 'create_ticket').length).toBe(sentByA.length + 1);

    // the network comes back: A's late report is refused, and A itself carries on
    engineLink.restore();
    const late = await h.engine.gql(h.workerToken, Q.journal, {
      input: {
        taskId,
        workerId: 'worker-a',
        attempt: 1,
        sequence: write.sequence,
        kind: 'TOOL_CALL',
        toolRef: 'crm/create_ticket',
        state: 'COMPLETED',
        request: { callId: 'call_2', arguments: {} },
        response: { ticketId: 'T-late' },
      },
    });
    expect(codeOf(late)).toBe('LEASE_NOT_HELD');
    expect(a.proc.exitCode).toBeNull();
  }, 90_000);

  it('worker ↔ tool: a connection cut while the CRM holds a write answer is re-sent under the same key: one ticket', async () => {
    await deployThrough(`${toolLink.url}/mcp`);
    h.crm.reset();
    h.crm.setDelay('create_ticket', 2000, 1); // the ticket is made, the answer held
    const id = await startProcess(h, 'support-triage', { customerId: 'C-42', message: 'parcel again' });
    await waitFor('the write reaches the CRM', () => h.crm.countCalls('create_ticket') > 0, 30_000);
    toolLink.cut();
    await new Promise((r) => setTimeout(r, 500));
    toolLink.restore();
    const done = await waitFor(
      'the task completes',
      async () => {
        const i = await instance(h, id);
        return i.currentNodeId === 'notify_customer' ? i : null;
      },
      60_000,
    );
    const write = done.tasks[0].steps.find(
      (s) => s.toolRef === 'crm/create_ticket' && s.state === 'COMPLETED',
    )!;
    const calls = h.crm.calls.filter((c) => c.tool === 'create_ticket');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.headerKey === write.idempotencyKey)).toBe(true);
    expect(h.crm.countSideEffects('create_ticket')).toBe(1);
  }, 90_000);
});
