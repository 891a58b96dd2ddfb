/**
 * What the approver reads next to the arguments (SPEC §11, seed 001 §四.3): the basis — the node's
 * inputs, the model's text next to the call, the tool calls before it in this attempt, their arguments
 * as the evidence policy keeps them — and what happens on approval, all from the journal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { decide, PAY_SERVER, tool } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;

const PROCESS = `
kind: Process
key: basis
variables: { customerId: { type: string }, message: { type: string } }
start: work
nodes:
  - id: work
    type: agent
    topic: basis
    model: gemini-3.6-flash
    prompt: Settle the customer's request.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [pay/lookup, pay/refund, pay/charge, pay/wire, bank/transfer]
    result_variable: outcome
    next: done
  - { id: done, type: end }
`;
const BANK = `
kind: ToolServer
name: bank
transport: streamable-http
url: http://127.0.0.1:4198/mcp
tools:
  transfer:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    impact: "Send \${amount} EUR to account \${iban}"
    reversible: false
    risk: high
    approval_valid_minutes: 30
    approval_timeout_hours: 2
    redact: [iban]
`;
const READABLE = `query($id: ID!) { approval(id: $id) { state createdAt decidedAt impact reversible risk expiresAt validUntil } }`;
const BASIS = `query($id: ID!) { approval(id: $id) { version proposalVersion onApproval
  basis { inputs modelText redactedPaths priorCalls { sequence toolRef arguments response error state } } } }`;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, { s: [PAY_SERVER, BANK, PROCESS].join('---') });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'basis-worker', { topics: ['basis'] }), 'w-b');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
});
afterAll(() => engine?.close());

describe('Approval.basis and onApproval', () => {
  it('shows the inputs, the model text and the earlier calls (redacted), and what approval does', async () => {
    await engine.ok(engine.adminToken, Q.start, {
      key: 'basis',
      v: { customerId: 'C-42', message: 'My parcel 5531 never arrived.' },
    });
    let task = await w.fetchOne({ topic: 'basis' });
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED');
    await tool(w, task, 2, 'pay/lookup', 'COMPLETED', { orderId: '5531' }, { status: 'lost' });
    // a charge needs approval too: approved, run, then the agent goes on
    const charge = await tool(w, task, 3, 'pay/charge', 'PROPOSED', { card: { number: '4111' }, amount: 5 });
    await decide(engine, fin, {
      approvalId: charge.step.approvalId!,
      decision: 'APPROVE',
      digest: charge.step.digest,
    });
    task = await w.fetchOne({ topic: 'basis' });
    await tool(w, task, 3, 'pay/charge', 'STARTED', { card: { number: '4111' }, amount: 5 });
    await tool(w, task, 3, 'pay/charge', 'COMPLETED', { card: { number: '4111' }, amount: 5 }, { ok: true });
    await w.model(task, 4, 'STARTED');
    await w.model(task, 4, 'COMPLETED', {
      response: { role: 'assistant', content: 'The parcel is lost; a refund of 89 EUR is due.' },
    });
    const refund = await tool(w, task, 5, 'pay/refund', 'PROPOSED', { orderId: '5531', amount: 89 });

    const a = (await engine.ok(fin, BASIS, { id: refund.step.approvalId })).approval;
    expect(a.version).toBe(1);
    expect(a.proposalVersion).toBe(1);
    expect(a.basis.inputs).toEqual({ customerId: 'C-42', message: 'My parcel 5531 never arrived.' });
    expect(a.basis.modelText).toBe('The parcel is lost; a refund of 89 EUR is due.');
    expect(a.basis.priorCalls).toEqual([
      {
        sequence: 2,
        toolRef: 'pay/lookup',
        arguments: { orderId: '5531' },
        response: { status: 'lost' },
        error: null,
        state: 'COMPLETED',
      },
      {
        sequence: 3,
        toolRef: 'pay/charge',
        arguments: { card: { number: '[redacted]' }, amount: 5 },
        response: { ok: true },
        error: null,
        state: 'COMPLETED',
      },
    ]);
    expect(a.basis.redactedPaths).toEqual(['priorCalls[1].arguments.card.number']);
    expect(a.onApproval).toMatch(
      /^The worker calls pay\/refund with these arguments once, with idempotency key abada-[0-9a-f]{40}; /,
    );
    // the key announced is the key the call gets when it starts
    await decide(engine, fin, {
      approvalId: refund.step.approvalId!,
      decision: 'APPROVE',
      digest: refund.step.digest,
    });
    task = await w.fetchOne({ topic: 'basis' });
    const started = await tool(w, task, 5, 'pay/refund', 'STARTED', { orderId: '5531', amount: 89 });
    expect(a.onApproval).toContain(started.idempotencyKey!);
  });

  it('a keyless write says it is never sent twice; a model that wrote no text gives null', async () => {
    await engine.ok(engine.adminToken, Q.start, { key: 'basis', v: { customerId: 'C-7', message: 'hi' } });
    const task = await w.fetchOne({ topic: 'basis' });
    await w.model(task, 1, 'STARTED');
    await w.model(task, 1, 'COMPLETED', { response: { role: 'assistant', content: null } });
    const wire = await tool(w, task, 2, 'pay/wire', 'PROPOSED', { amount: 10 });
    const a = (await engine.ok(fin, BASIS, { id: wire.step.approvalId })).approval;
    expect(a.basis.modelText).toBeNull();
    expect(a.basis.priorCalls).toEqual([]);
    expect(a.onApproval).toContain('without an idempotency key');
  });

  it('impact, risk, reversibility and the time bounds, from the frozen binding; redaction holds in impact', async () => {
    await engine.ok(engine.adminToken, Q.start, {
      key: 'basis',
      v: { customerId: 'C-9', message: 'pay me' },
    });
    let task = await w.fetchOne({ topic: 'basis' });
    const p = await tool(w, task, 1, 'bank/transfer', 'PROPOSED', { amount: 40, iban: 'DE89 3704' });
    const pending = (await engine.ok(fin, READABLE, { id: p.step.approvalId })).approval;
    expect(pending).toMatchObject({
      state: 'PENDING',
      impact: 'Send 40 EUR to account [redacted]',
      reversible: false,
      risk: 'HIGH',
      validUntil: null,
    });
    expect(Date.parse(pending.expiresAt) - Date.parse(pending.createdAt)).toBe(2 * 3_600_000);
    await decide(engine, fin, { approvalId: p.step.approvalId!, decision: 'APPROVE', digest: p.step.digest });
    const approved = (await engine.ok(fin, READABLE, { id: p.step.approvalId })).approval;
    expect(Date.parse(approved.validUntil) - Date.parse(approved.decidedAt)).toBe(30 * 60_000);
    // a tool that declares nothing: the defaults
    task = await w.fetchOne({ topic: 'basis' });
    await tool(w, task, 1, 'bank/transfer', 'STARTED', { amount: 40, iban: 'DE89 3704' });
    await tool(w, task, 1, 'bank/transfer', 'COMPLETED', { amount: 40, iban: 'DE89 3704' }, { ok: true });
    const wire = await tool(w, task, 2, 'pay/wire', 'PROPOSED', { amount: 10 });
    const plain = (await engine.ok(fin, READABLE, { id: wire.step.approvalId })).approval;
    expect(plain).toMatchObject({ impact: null, reversible: true, risk: 'MEDIUM', expiresAt: null });
  });
});
