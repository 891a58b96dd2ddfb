/**
 * What the tool declares about its approval: conditional levels (`approval: [{when, levels}]`), each
 * decided by a different person on the same digest; `redact` (the approver sees "[redacted]", the
 * digest still covers the full call); `editable` (approve with changes: a new digest the call must match).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallDigest } from '../../../server/shared/canonical.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { json } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { approvalOf, decide, deployPay, historyOf, startAndPropose, taskOf, tool, toolRaw } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;
let lead: string;
let both: string;
const KEYS = [
  'two',
  'same',
  'small',
  'rej1',
  'onelevel',
  'redact',
  'edit',
  'noedit',
  'edit2',
  'edit3',
  'model',
];

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, KEYS);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: KEYS }), 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  lead = await engine.principal('HUMAN', 'lee', { groups: ['finance-leads'] });
  both = await engine.principal('HUMAN', 'bo', { groups: ['finance', 'finance-leads'] });
});
afterAll(() => engine?.close());

describe('two-level approval rule', () => {
  it('amount 1500: finance then finance-leads, different people, the same digest', async () => {
    const args = { orderId: '9001', amount: 1500, currency: 'EUR' };
    const p = await startAndPropose(w, 'two', 'pay/refund', args);
    let a = await approvalOf(engine, fin, p.approvalId);
    expect(a).toMatchObject({ state: 'PENDING', level: 1, levels: 2, candidateGroups: ['finance'] });
    // finance-leads decide the second level only.
    expect(
      codeOf(await decide(engine, lead, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest })),
    ).toBe('FORBIDDEN');
    const l1 = await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    expect(l1.data?.decideApproval).toMatchObject({
      state: 'PENDING',
      level: 2,
      levels: 2,
      candidateGroups: ['finance-leads'],
      digest: p.digest,
    });
    expect((await taskOf(engine, p.task.id)).state).toBe('AWAITING_APPROVAL');
    expect(await w.fetch({ topic: 'two' })).toEqual([]);
    // The second level is bound to the same digest.
    const stale = await decide(engine, lead, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: 'a'.repeat(64),
    });
    expect(codeOf(stale)).toBe('STALE_DIGEST');
    const l2 = await decide(engine, lead, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(l2.data?.decideApproval).toMatchObject({ state: 'APPROVED', decidedBy: 'lee', digest: p.digest });
    a = await approvalOf(engine, fin, p.approvalId);
    expect(a.decisions.map((d) => [d.level, d.decidedBy, d.digest === p.digest, d.outcome])).toEqual([
      // an outsider's attempt is evidence too (SPEC §14.5)
      [1, 'lee', true, 'FORBIDDEN'],
      [1, 'fran', true, 'ACCEPTED'],
      [2, 'lee', false, 'STALE_DIGEST'],
      [2, 'lee', true, 'ACCEPTED'],
    ]);
    // each decision records the policy it was made under: definition version, rule, the person's groups
    const policy = await engine.ok(
      fin,
      `query($id: ID!) { approval(id: $id) { decisions { decidedBy definitionVersion rule groups outcome } } }`,
      { id: p.approvalId },
    );
    expect(policy.approval.decisions.filter((d: { outcome: string }) => d.outcome === 'ACCEPTED')).toEqual([
      {
        decidedBy: 'fran',
        definitionVersion: 1,
        rule: 'amount > 1000',
        groups: ['finance'],
        outcome: 'ACCEPTED',
      },
      {
        decidedBy: 'lee',
        definitionVersion: 1,
        rule: 'amount > 1000',
        groups: ['finance-leads'],
        outcome: 'ACCEPTED',
      },
    ]);
    const h = await historyOf(engine, p.instanceId);
    expect(h.map((e) => e.eventType).slice(3)).toEqual([
      'APPROVAL_OPENED',
      'STEP_PROPOSED',
      'APPROVAL_DECISION_REFUSED',
      'APPROVAL_LEVEL_APPROVED',
      'APPROVAL_DECISION_REFUSED',
      'APPROVAL_APPROVED',
      'STEP_APPROVED',
    ]);
    expect(h[5].data).toMatchObject({ code: 'FORBIDDEN', level: 1 });
    expect(h[6].data).toMatchObject({ level: 1, of: 2, digest: p.digest, version: 1, groups: ['finance'] });
    expect(h[8].data).toMatchObject({ digest: p.digest, decidedOn: p.digest, level: 2, version: 1 });
    const t = await w.fetchOne({ topic: 'two' });
    expect((await tool(w, t, 1, 'pay/refund', 'STARTED', args)).idempotencyKey).toMatch(/^abada-/);
  });

  it('the same person cannot decide both levels (SEPARATION_OF_DUTIES)', async () => {
    const p = await startAndPropose(w, 'same', 'pay/refund', {
      orderId: '9002',
      amount: 2000,
      currency: 'EUR',
    });
    const input = { approvalId: p.approvalId, decision: 'APPROVE' as const, digest: p.digest };
    expect((await decide(engine, both, input)).data?.decideApproval.level).toBe(2);
    expect(codeOf(await decide(engine, both, input))).toBe('SEPARATION_OF_DUTIES');
    expect((await approvalOf(engine, lead, p.approvalId)).state).toBe('PENDING');
    expect((await decide(engine, lead, input)).data?.decideApproval.state).toBe('APPROVED');
  });

  it('a rejection at the first level ends it: REJECTED, the second level never asked', async () => {
    const p = await startAndPropose(w, 'rej1', 'pay/refund', {
      orderId: '9004',
      amount: 3000,
      currency: 'EUR',
    });
    const r = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'REJECT',
      digest: p.digest,
      comment: 'Too large without a ticket.',
    });
    expect(r.data?.decideApproval).toMatchObject({
      state: 'REJECTED',
      level: 1,
      levels: 2,
      decidedBy: 'fran',
    });
    const t = await w.fetchOne({ topic: 'rej1' });
    expect(t.steps[0]).toMatchObject({ state: 'REJECTED', comment: 'Too large without a ticket.' });
    // The second level came too late: ALREADY_DECIDED, recorded like any losing decision.
    const late = await decide(engine, lead, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
    });
    expect(codeOf(late)).toBe('ALREADY_DECIDED');
    const a = await approvalOf(engine, lead, p.approvalId);
    expect(a.decisions.map((d) => [d.level, d.decidedBy, d.outcome])).toEqual([
      [1, 'fran', 'ACCEPTED'],
      [1, 'lee', 'ALREADY_DECIDED'],
    ]);
    // Someone outside every level is still FORBIDDEN.
    const sam = await engine.principal('HUMAN', 'sam', { groups: ['support'] });
    expect(
      codeOf(await decide(engine, sam, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest })),
    ).toBe('FORBIDDEN');
  });

  it('a matching one-level rule replaces the approvers; the rule with more levels wins', async () => {
    const groups = async (amount: number) => {
      const p = await startAndPropose(w, 'onelevel', 'pay/payout', { amount });
      const a = await approvalOf(engine, fin, p.approvalId).catch(() => null);
      const admin = await approvalOf(engine, engine.adminToken, p.approvalId);
      return { candidateGroups: admin.candidateGroups, levels: admin.levels, finSees: a !== null };
    };
    expect(await groups(50)).toEqual({ candidateGroups: ['finance'], levels: 1, finSees: true });
    expect(await groups(500)).toEqual({ candidateGroups: ['cfo'], levels: 1, finSees: false });
    expect(await groups(50_000)).toEqual({ candidateGroups: ['finance'], levels: 2, finSees: true });
  });

  it('amount 50 needs one decision', async () => {
    const p = await startAndPropose(w, 'small', 'pay/refund', {
      orderId: '9003',
      amount: 50,
      currency: 'EUR',
    });
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a).toMatchObject({ level: 1, levels: 1, candidateGroups: ['finance'] });
    const r = await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    expect(r.data?.decideApproval).toMatchObject({ state: 'APPROVED', level: 1, levels: 1 });
  });
});

describe('what the approver is shown', () => {
  it('the model that proposed the call (a fallback model when the node fell back)', async () => {
    await engine.ok(engine.adminToken, `mutation { startProcess(key: "model") { id } }`);
    const t = await w.fetchOne({ topic: 'model' });
    await w.journal(t, 1, {
      kind: 'MODEL_CALL',
      state: 'STARTED',
      model: 'gpt-4.1-mini',
      request: { model: 'gpt-4.1-mini', messagesHash: 'h1' },
    });
    await w.journal(t, 1, {
      kind: 'MODEL_CALL',
      state: 'COMPLETED',
      model: 'gpt-4.1-mini',
      request: { model: 'gpt-4.1-mini', messagesHash: 'h1' },
      response: { role: 'assistant', content: 'refund' },
    });
    const j = await tool(w, t, 2, 'pay/refund', 'PROPOSED', { orderId: '1', amount: 5 });
    const a = await approvalOf(engine, fin, j.step.approvalId!);
    expect(a).toMatchObject({
      model: 'gpt-4.1-mini',
      nodeId: 'work',
      attempt: 1,
      sequence: 2,
      server: 'pay',
      tool: 'refund',
    });
  });
});

describe('redaction', () => {
  it('the approver sees "[redacted]"; the digest covers the full call; a changed hidden field diverges', async () => {
    const args = { card: { number: '4111111111111111', expiry: '12/29' }, amount: 20 };
    const p = await startAndPropose(w, 'redact', 'pay/charge', args);
    expect(p.digest).toBe(toolCallDigest('pay/charge', args));
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.arguments).toEqual({ card: { number: '[redacted]', expiry: '12/29' }, amount: 20 });
    expect(a.redactedPaths).toEqual(['card.number']);
    expect(a.digest).toBe(p.digest);
    expect(a.digest).not.toBe(toolCallDigest('pay/charge', a.arguments));
    const list = await engine.ok(
      fin,
      `query { approvals(state: PENDING) { edges { node { id arguments } } } }`,
    );
    const listed = list.approvals.edges.find(
      (e: { node: { id: string } }) => e.node.id === p.approvalId,
    ).node;
    expect(JSON.stringify(listed)).not.toContain('4111');
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: a.digest });
    // The worker holds the full call in its journal; changing the hidden field is not the approved call.
    const t = await w.fetchOne({ topic: 'redact' });
    expect(json(t.steps[0].request).arguments).toEqual(args);
    const changed = { ...args, card: { ...args.card, number: '5500000000000004' } };
    expect(codeOf(await toolRaw(w, t, 1, 'pay/charge', 'STARTED', changed))).toBe('DIVERGENT_STEP');
    expect((await tool(w, t, 1, 'pay/charge', 'STARTED', args)).idempotencyKey).toMatch(/^abada-/);
    expect(JSON.stringify(await historyOf(engine, p.instanceId))).not.toContain('4111');
  });
});

describe('approve with changes', () => {
  it('an editable call approved with edited arguments: new digest, the step carries them, STARTED must match', async () => {
    const args = { orderId: '5531', amount: 89 };
    const edited = { orderId: '5531', amount: 80 };
    const p = await startAndPropose(w, 'edit', 'pay/adjust', args);
    const before = await approvalOf(engine, fin, p.approvalId);
    expect(before.editable).toBe(true);
    const rejectEdited = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'REJECT',
      digest: p.digest,
      comment: 'no',
      arguments: edited,
    });
    expect(codeOf(rejectEdited)).toBe('VALIDATION_FAILED');
    const notObject = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
      arguments: [80],
    });
    expect(codeOf(notObject)).toBe('VALIDATION_FAILED');
    const r = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
      arguments: edited,
    });
    expect(r.errors).toBeUndefined();
    const newDigest = toolCallDigest('pay/adjust', edited);
    expect(r.data!.decideApproval).toMatchObject({ state: 'APPROVED', digest: newDigest, arguments: edited });
    const a = await approvalOf(engine, fin, p.approvalId);
    expect(a.decisions).toEqual([
      expect.objectContaining({
        decidedBy: 'fran',
        digest: p.digest,
        editedDigest: newDigest,
        outcome: 'ACCEPTED',
      }),
    ]);
    const t = await w.fetchOne({ topic: 'edit' });
    expect(t.steps[0]).toMatchObject({ state: 'APPROVED', digest: newDigest });
    expect(json(t.steps[0].request).arguments).toEqual(edited);
    expect(t.steps[0].comment).toBe('Approved with changes by fran: amount: 89 → 80');
    expect(codeOf(await toolRaw(w, t, 1, 'pay/adjust', 'STARTED', args))).toBe('DIVERGENT_STEP');
    expect((await tool(w, t, 1, 'pay/adjust', 'STARTED', edited)).idempotencyKey).toMatch(/^abada-/);
    const h = await historyOf(engine, p.instanceId);
    const approved = h.find((e) => e.eventType === 'APPROVAL_APPROVED')!;
    expect(approved.data).toMatchObject({
      digest: newDigest,
      decidedOn: p.digest,
      version: 2,
      editedFrom: { version: 1, digest: p.digest },
    });
  });

  it('edits at the first of two levels reach the step the second level approves', async () => {
    const args = { orderId: '7000', amount: 1500 };
    const edited = { orderId: '7000', amount: 1200 };
    const p = await startAndPropose(w, 'edit2', 'pay/adjust', args);
    const l1 = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
      arguments: edited,
    });
    const newDigest = toolCallDigest('pay/adjust', edited);
    expect(l1.data?.decideApproval).toMatchObject({ state: 'PENDING', level: 2, digest: newDigest });
    // The second level decides on what it is shown: the edited proposal.
    expect(
      codeOf(await decide(engine, lead, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest })),
    ).toBe('STALE_DIGEST');
    const l2 = await decide(engine, lead, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: newDigest,
    });
    expect(l2.data?.decideApproval).toMatchObject({
      state: 'APPROVED',
      digest: newDigest,
      arguments: edited,
    });
    expect(await approvalOf(engine, fin, p.approvalId)).toMatchObject({
      proposalVersion: 2,
      digest: newDigest,
    });
    const t = await w.fetchOne({ topic: 'edit2' });
    expect(t.steps[0]).toMatchObject({ state: 'APPROVED', digest: newDigest });
    expect(json(t.steps[0].request).arguments).toEqual(edited);
    expect(t.steps[0].comment).toBe('Approved with changes by fran: amount: 1500 → 1200');
    expect(codeOf(await toolRaw(w, t, 1, 'pay/adjust', 'STARTED', args))).toBe('DIVERGENT_STEP');
    expect((await tool(w, t, 1, 'pay/adjust', 'STARTED', edited)).idempotencyKey).toMatch(/^abada-/);
  });

  it('an edit sent back with "[redacted]" keeps the real value the approver never saw', async () => {
    const args = { orderId: '5532', amount: 89, iban: 'DE89370400440532013000' };
    const p = await startAndPropose(w, 'edit3', 'pay/adjust', args);
    const shown = await approvalOf(engine, fin, p.approvalId);
    expect(shown.arguments).toEqual({ ...args, iban: '[redacted]' });
    const r = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: shown.digest,
      arguments: { ...json(shown.arguments), amount: 80 },
    });
    expect(r.errors).toBeUndefined();
    const meant = { ...args, amount: 80 };
    expect(r.data!.decideApproval).toMatchObject({ digest: toolCallDigest('pay/adjust', meant) });
    const t = await w.fetchOne({ topic: 'edit3' });
    expect(json(t.steps[0].request).arguments).toEqual(meant);
    expect(t.steps[0].comment).toBe('Approved with changes by fran: amount: 89 → 80');
  });

  it('a non-editable tool refuses edited arguments (FORBIDDEN); unchanged arguments are no edit', async () => {
    const args = { orderId: '5531', amount: 89, currency: 'EUR' };
    const p = await startAndPropose(w, 'noedit', 'pay/refund', args);
    const r = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
      arguments: { ...args, amount: 80 },
    });
    expect(codeOf(r)).toBe('FORBIDDEN');
    expect((await approvalOf(engine, fin, p.approvalId)).state).toBe('PENDING');
    // The same arguments sent back unchanged are not an edit.
    const same = await decide(engine, fin, {
      approvalId: p.approvalId,
      decision: 'APPROVE',
      digest: p.digest,
      arguments: { currency: 'EUR', amount: 89, orderId: '5531' },
    });
    expect(same.data?.decideApproval).toMatchObject({ state: 'APPROVED', digest: p.digest });
  });
});
