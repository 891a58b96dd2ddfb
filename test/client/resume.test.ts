/**
 * subscribeResumable, the typed client's subscription that survives lost connections: cut again and
 * again while approvals are proposed, it receives every approval exactly once and in order; a pruned
 * cursor ends it through onRefused with VALIDATION_FAILED instead of retrying forever.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalOpened, type ResultOf, subscribeResumable } from '../../server/client/index.js';
import { deployPay, startAndPropose } from '../engine/approvals/setup.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { waitFor } from '../helpers/wait.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { settle } from '../helpers/ws.js';

let engine: TestEngine;
let w: WorkerSim;
let fin: string;

beforeAll(async () => {
  engine = await startTestEngine();
  await deployPay(engine, ['client-resume']);
  w = new WorkerSim(engine, await engine.principal('WORKER', 'w', { topics: ['client-resume'] }), 'w-1');
  fin = await engine.principal('HUMAN', 'fran', { groups: ['finance'] });
});
afterAll(() => engine?.close());

describe('subscribeResumable', () => {
  it('receives every approval once, in order, across lost connections', async () => {
    const got: ResultOf<typeof ApprovalOpened>['approvalOpened'][] = [];
    const after = (await engine.ok(fin, '{ eventCursor }')).eventCursor as string;
    const s = subscribeResumable({
      url: engine.url,
      token: fin,
      query: ApprovalOpened,
      after,
      cursorOf: (d) => d.approvalOpened.eventCursor,
      onEvent: (d) => got.push(d.approvalOpened),
    });
    const proposed: string[] = [];
    for (let i = 0; i < 6; i++) {
      s.interrupt(); // the connection drops just before each proposal commits
      proposed.push(
        (await startAndPropose(w, 'client-resume', 'pay/refund', { orderId: `r${i}`, amount: i + 1 }))
          .approvalId,
      );
    }
    await waitFor('every approval', () => got.length >= proposed.length, 20_000);
    await settle(300);
    await s.dispose();
    expect(got.map((a) => a.id)).toEqual(proposed);
    expect(s.resumes).toBeGreaterThanOrEqual(1);
    expect(s.cursor).toBe(got[got.length - 1].eventCursor);
  });

  it('ends through onRefused when the cursor is not the engine’s', async () => {
    let refusal: unknown[] | null = null;
    const s = subscribeResumable({
      url: engine.url,
      token: fin,
      query: ApprovalOpened,
      after: 'v1.999999999',
      cursorOf: (d) => d.approvalOpened.eventCursor,
      onEvent: () => {},
      onRefused: (e) => {
        refusal = [...e];
      },
    });
    await waitFor('the refusal', () => refusal, 10_000);
    expect(JSON.stringify(refusal)).toContain('VALIDATION_FAILED');
    await settle(300);
    expect(s.resumes).toBe(0);
    await s.dispose();
  });
});
