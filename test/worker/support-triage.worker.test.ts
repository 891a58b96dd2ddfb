/**
 * Seed 002 with the real Agent Worker in its own process: it takes the task, checks the CRM contract,
 * reads the customer, journals the write before sending it with the engine's key, and completes. Then
 * the crash of seed 002's table: a worker killed (SIGKILL) right after sending create_ticket; when its
 * lease lapses another worker process rebuilds the conversation from the journal, re-sends the write with
 * the same key (the CRM replays it: one ticket) and pays only for the model turn that never finished.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supportTriageScript } from '../../server/demo/scripts.js';
import {
  CRM_SECRET,
  type Harness,
  instance,
  journalOf,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from './helpers.js';

let h: Harness;
const procs: WorkerProcess[] = [];

beforeAll(async () => {
  h = await startHarness({ script: supportTriageScript });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await h?.close();
});

const ALICE = { customerId: 'C-42', message: 'My parcel never arrived' };

describe('seed 002 with the real worker', () => {
  it('completes with exactly one ticket and three model calls, and exits 0 on SIGTERM', async () => {
    h.crm.reset();
    h.model.reset();
    const w = spawnWorker(h, 'worker-a');
    procs.push(w);
    const id = await startProcess(h, 'support-triage', ALICE);
    const inst = await waitFor('the triage task to complete', async () => {
      const i = await instance(h, id);
      return i.currentNodeId === 'notify_customer' ? i : null;
    });
    expect(inst.variables.triage).toEqual({
      ticketId: expect.stringMatching(/^T-\d+$/),
      priority: 'high',
      summary: 'Order 5531 lost, gold customer',
    });
    expect(h.crm.countSideEffects('create_ticket')).toBe(1);
    expect(h.model.callCount).toBe(3);

    const task = inst.tasks.find((t) => t.nodeId === 'triage')!;
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:COMPLETED',
      '1.3:MODEL_CALL:COMPLETED',
      '1.4:TOOL_CALL:COMPLETED',
      '1.5:MODEL_CALL:COMPLETED',
    ]);
    // The write went out with the engine's key, in the header and in _meta.
    const key = task.steps[3].idempotencyKey!;
    expect(key).toMatch(/^abada-[0-9a-f]{40}$/);
    const call = h.crm.calls.find((c) => c.tool === 'create_ticket')!;
    expect(call).toMatchObject({ headerKey: key, metaKey: key, status: 'ok' });
    // The model saw the guarded prompt, the inputs as blocks and two functions with the MCP schemas.
    const first = h.model.calls[0];
    expect(first.messages[0].role).toBe('system');
    expect(first.messages[0].content).toContain('look the customer up');
    expect(first.messages[1].content).toContain('<input name="customerId">C-42</input>');
    expect(first.tools.map((t) => t.function.name)).toEqual([
      'crm__get_customer',
      'crm__create_ticket',
      'crm__send_email',
    ]);
    expect(JSON.stringify(first.tools)).not.toContain('$schema');
    // Attempt metadata: no prompt, a hash of it.
    expect(task.metadata).toMatchObject({
      model: 'gemini-3.6-flash',
      provider: 'openai-compatible',
      attempt: 1,
      resultVariable: 'triage',
      confidence: 92,
      tools: ['crm/get_customer', 'crm/create_ticket'],
      promptHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(task.metadata)).not.toContain('look the customer up');

    w.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
    // One JSON line per event, with task ids, never prompts, secrets or tool payloads.
    expect(w.logs.some((l) => l.event === 'task.completed' && l.taskId === task.id)).toBe(true);
    expect(w.logs.some((l) => l.event === 'model.answered' && l.sequence === 3)).toBe(true);
    expect(w.output).not.toContain('look the customer up');
    expect(w.output).not.toContain(CRM_SECRET);
    expect(w.output).not.toContain('Parcel not received');
  }, 40_000);

  it('a worker killed right after sending create_ticket: another finishes, one ticket, no turn paid twice', async () => {
    h.crm.reset();
    h.model.reset();
    h.crm.setDelay('create_ticket', 4000, 1);
    const a = spawnWorker(h, 'worker-crash-a', { ABADA_WORKER_LOCK_MS: '1500' });
    procs.push(a);
    const id = await startProcess(h, 'support-triage', ALICE);
    await waitFor('create_ticket to be sent', () => h.crm.countCalls('create_ticket') === 1);
    a.kill('SIGKILL');
    await a.exited;
    expect(h.model.callCount).toBe(2);
    expect(h.crm.countSideEffects('create_ticket')).toBe(1);

    const b = spawnWorker(h, 'worker-crash-b', { ABADA_WORKER_LOCK_MS: '1500' });
    procs.push(b);
    const inst = await waitFor('the other worker to finish', async () => {
      const i = await instance(h, id);
      return i.currentNodeId === 'notify_customer' ? i : null;
    });
    expect(h.crm.countSideEffects('create_ticket')).toBe(1);
    const sends = h.crm.calls.filter((c) => c.tool === 'create_ticket');
    expect(sends.map((c) => c.status)).toEqual(['ok', 'replayed']);
    expect(sends[0].key).toBe(sends[1].key);
    // Turns 1 and 2 were finished by A; B rebuilt them from the journal and asked only for the last one.
    expect(h.model.callCount).toBe(3);
    const task = inst.tasks.find((t) => t.nodeId === 'triage')!;
    expect(task.attempt).toBe(1);
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:COMPLETED',
      '1.3:MODEL_CALL:COMPLETED',
      '1.4:TOOL_CALL:COMPLETED',
      '1.5:MODEL_CALL:COMPLETED',
    ]);
    expect(inst.history.map((e) => e.eventType)).toContain('TASK_LEASE_REACQUIRED');
    expect(b.logs.some((l) => l.event === 'tool.resend' && l.sequence === 4)).toBe(true);
    expect((inst.variables.triage as { ticketId: string }).ticketId).toBe(
      (sends[0].result as { ticketId: string }).ticketId,
    );
    b.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
  }, 40_000);
});
