/**
 * What approval subscribers receive: the approver's view (redacted), each change as it stands after that
 * change (two quick level decisions are two different events), and an escalation.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepSla } from '../../server/engine/approvals/testing.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { decide, deployPay, startAndPropose } from '../engine/approvals/setup.js';
import { STARTED_MS, settle, subscribe, type Subscriber } from '../helpers/ws.js';

const VIEW = `id state level levels candidateGroups arguments redactedPaths escalated decidedBy`;
let engine: TestEngine;
let w: WorkerSim;
let fin: string;
let lead: string;
const subs: Subscriber[] = [];

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, ['levels', 'hidden']);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: ['levels', 'hidden'] }), 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
  lead = await engine.principal('HUMAN', 'lee', { groups: ['finance-leads'] });
});
afterAll(async () => {
  await Promise.all(subs.map((s) => s.dispose().catch(() => {})));
  await engine?.close();
});

function sub(token: string, query: string) {
  const s = subscribe(engine.url, token, query);
  subs.push(s);
  return s;
}

describe('approval subscriptions', () => {
  it('two level decisions in quick succession arrive as two different states', async () => {
    const changed = sub(lead, `subscription { approvalChanged { ${VIEW} } }`);
    await changed.connected;
    await settle(STARTED_MS);
    const p = await startAndPropose(w, 'levels', 'pay/refund', { orderId: '1', amount: 1500 });
    await decide(engine, fin, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    await changed.next((d) => d.approvalChanged.id === p.approvalId);
    await decide(engine, lead, { approvalId: p.approvalId, decision: 'APPROVE', digest: p.digest });
    await changed.next((d) => d.approvalChanged.state === 'APPROVED');
    expect(changed.events.map((e) => e.data.approvalChanged)).toMatchObject([
      { state: 'PENDING', level: 2, levels: 2, candidateGroups: ['finance-leads'], decidedBy: null },
      { state: 'APPROVED', level: 2, levels: 2, decidedBy: 'lee' },
    ]);
  });

  it('approvalOpened and approvalChanged show the redacted view; escalation is an event', async () => {
    const opened = sub(fin, `subscription { approvalOpened { ${VIEW} } }`);
    const changed = sub(fin, `subscription { approvalChanged { ${VIEW} } }`);
    await Promise.all([opened.connected, changed.connected]);
    await settle(STARTED_MS);
    const args = { card: { number: '4111111111111111' }, amount: 5 };
    const p = await startAndPropose(w, 'hidden', 'pay/charge', args);
    const ev = await opened.next((d) => d.approvalOpened.id === p.approvalId);
    expect(ev.data.approvalOpened).toMatchObject({
      arguments: { card: { number: '[redacted]' }, amount: 5 },
      redactedPaths: ['card.number'],
    });
    await engine.context.db.execute(
      sql`UPDATE approvals SET sla_due_at = now() - interval '1 second' WHERE id = ${p.approvalId}`,
    );
    expect(await sweepSla(engine.context)).toBe(1);
    const esc = await changed.next((d) => d.approvalChanged.id === p.approvalId);
    expect(esc.data.approvalChanged).toMatchObject({
      state: 'PENDING',
      escalated: true,
      candidateGroups: ['finance'],
    });
    expect(JSON.stringify([...opened.events, ...changed.events])).not.toContain('4111');
  });
});
