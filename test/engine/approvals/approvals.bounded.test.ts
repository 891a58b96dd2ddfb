/**
 * An approval is not a permanent permission (SPEC §11 "Bounded", seed 001 §五): when the approved call
 * starts, the validity window is checked, then the authority of every person who decided it. A lapse
 * expires or voids the approval, commits a new version of the same call (same digest) for people to
 * decide, parks the task — and only then refuses the start. The model is never asked again.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { sweepExpired } from '../../../server/engine/approvals/testing.js';
import { Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { decide, historyOf, PAY_SERVER, payProcess, taskOf, tool, toolRaw } from './setup.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;
let finn: string;
const ARGS = { amount: 40, iban: 'DE89 3704' };
const KEYS = ['bd-window', 'bd-group', 'bd-disabled', 'bd-timeout'];

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
    approval_valid_minutes: 30
    approval_timeout_hours: 1
`;
const process = (key: string) => payProcess(key).replace('pay/wire]', 'pay/wire, bank/transfer]');
const APPROVAL = `query($id: ID!) { approval(id: $id) { id state version digest voidReason candidateGroups
  earlierProposals { approvalId state } } }`;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, { s: [PAY_SERVER, BANK, ...KEYS.map(process)].join('---') });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'bd-worker', { topics: KEYS }), 'w-bd');
  finn = await engine.principal('HUMAN', 'finn', { groups: ['finance'] });
});
afterAll(() => engine?.close());

/** A transfer proposed and approved by a fresh `fran`, the task taken again by the worker. */
async function approvedAndTaken(key: string) {
  fin = await engine.principal('HUMAN', `fran-${key}`, { groups: ['finance'] });
  await engine.ok(engine.adminToken, Q.start, { key, v: { customerId: 'C-42' } });
  let task = await w.fetchOne({ topic: key });
  const p = await tool(w, task, 1, 'bank/transfer', 'PROPOSED', ARGS);
  const d = await decide(engine, fin, {
    approvalId: p.step.approvalId!,
    decision: 'APPROVE',
    digest: p.step.digest,
  });
  expect(d.errors).toBeUndefined();
  task = await w.fetchOne({ topic: key });
  return { task, approvalId: p.step.approvalId!, digest: p.step.digest };
}

/** After the lapse: the task parked, the step PROPOSED under a new PENDING version; approve it and start. */
async function expectReopenedThenRun(
  key: string,
  old: { approvalId: string; digest: string },
  lapsedAs: string,
) {
  const before = await taskOf(engine, (await approvalTask(old.approvalId)).taskId);
  expect(before.state).toBe('AWAITING_APPROVAL');
  const step = before.steps[0];
  expect(step.state).toBe('PROPOSED');
  expect(step.approvalId).not.toBe(old.approvalId);
  const a = (await engine.ok(finn, APPROVAL, { id: step.approvalId })).approval;
  expect(a).toMatchObject({ state: 'PENDING', version: 2, digest: old.digest });
  expect(a.earlierProposals).toEqual([{ approvalId: old.approvalId, state: lapsedAs }]);
  await decide(engine, finn, { approvalId: a.id, decision: 'APPROVE', digest: a.digest });
  const again = await w.fetchOne({ topic: key });
  const started = await tool(w, again, 1, 'bank/transfer', 'STARTED', ARGS);
  expect(started.idempotencyKey).toMatch(/^abada-/);
}

async function approvalTask(id: string) {
  return (await engine.ok(engine.adminToken, `query($id: ID!) { approval(id: $id) { taskId } }`, { id }))
    .approval;
}

describe('the approval is checked again when the approved call starts', () => {
  it('after its window: APPROVAL_EXPIRED, committed as EXPIRED with a new version waiting', async () => {
    const { task, approvalId, digest } = await approvedAndTaken('bd-window');
    // the window (30 min after approval) passed while the worker was away
    await engine.context.db.execute(
      sql`UPDATE approvals SET decided_at = now() - interval '31 minutes' WHERE id = ${approvalId}`,
    );
    const r = await toolRaw(w, task, 1, 'bank/transfer', 'STARTED', ARGS);
    expect(codeOf(r)).toBe('APPROVAL_EXPIRED');
    expect(r.errors![0].message).toContain('A new approval of the same call was asked');
    expect((await engine.ok(finn, APPROVAL, { id: approvalId })).approval.state).toBe('EXPIRED');
    const { processInstanceId } = (
      await engine.ok(engine.adminToken, 'query($id: ID!) { approval(id: $id) { processInstanceId } }', {
        id: approvalId,
      })
    ).approval;
    const events = (await historyOf(engine, processInstanceId)).map((h) => h.eventType);
    expect(events.slice(-3)).toEqual(['APPROVAL_EXPIRED', 'APPROVAL_OPENED', 'STEP_PROPOSED']);
    await expectReopenedThenRun('bd-window', { approvalId, digest }, 'EXPIRED');
  });

  it('a decider moved out of the group: APPROVAL_REQUIRED (AUTHORITY_LAPSED), VOIDED for AUTHORITY', async () => {
    const { task, approvalId, digest } = await approvedAndTaken('bd-group');
    const me = await engine.ok(fin, 'query { me { id } }');
    await engine.ok(
      engine.adminToken,
      'mutation($i: UpdatePrincipalInput!) { updatePrincipal(input: $i) { id } }',
      {
        i: { id: me.me.id, groups: ['support'] },
      },
    );
    const r = await toolRaw(w, task, 1, 'bank/transfer', 'STARTED', ARGS);
    expect(codeOf(r)).toBe('APPROVAL_REQUIRED');
    expect(r.errors![0].extensions).toMatchObject({ reason: 'AUTHORITY_LAPSED' });
    expect(r.errors![0].message).toContain('is no longer in finance');
    const old = (await engine.ok(finn, APPROVAL, { id: approvalId })).approval;
    expect(old).toMatchObject({ state: 'VOIDED', voidReason: 'AUTHORITY' });
    await expectReopenedThenRun('bd-group', { approvalId, digest }, 'VOIDED');
  });

  it('a decider disabled: VOIDED the same way', async () => {
    const { task, approvalId, digest } = await approvedAndTaken('bd-disabled');
    const me = await engine.ok(fin, 'query { me { id } }');
    await engine.ok(engine.adminToken, 'mutation($id: ID!) { disablePrincipal(id: $id) { id } }', {
      id: me.me.id,
    });
    const r = await toolRaw(w, task, 1, 'bank/transfer', 'STARTED', ARGS);
    expect(codeOf(r)).toBe('APPROVAL_REQUIRED');
    expect(r.errors![0].message).toContain('was disabled');
    await expectReopenedThenRun('bd-disabled', { approvalId, digest }, 'VOIDED');
  });
});

describe('the pending timeout (approval_timeout_hours)', () => {
  it('a pending approval nobody decided in time: EXPIRED as a rejection the model reads; a late decision is refused', async () => {
    await engine.ok(engine.adminToken, Q.start, { key: 'bd-timeout', v: { customerId: 'C-42' } });
    const task = await w.fetchOne({ topic: 'bd-timeout' });
    const p = await tool(w, task, 1, 'bank/transfer', 'PROPOSED', ARGS);
    const id = p.step.approvalId!;
    expect(await sweepExpired(engine.context)).toBe(0); // an hour to go
    await engine.context.db.execute(
      sql`UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = ${id}`,
    );
    expect(await sweepExpired(engine.context)).toBe(1);
    expect(await sweepExpired(engine.context)).toBe(0); // once
    expect((await engine.ok(finn, APPROVAL, { id })).approval.state).toBe('EXPIRED');
    const t = await taskOf(engine, task.id);
    expect(t.state).toBe('OPEN');
    expect(t.steps[0].state).toBe('REJECTED');
    expect(t.steps[0].comment).toMatch(/^Rejected: no decision before \d{4}-\d\d-\d\dT.*Z\.$/);
    const late = await decide(engine, finn, { approvalId: id, decision: 'APPROVE', digest: p.step.digest });
    expect(codeOf(late)).toBe('ALREADY_DECIDED');
  });
});
