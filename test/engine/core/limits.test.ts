/**
 * Limits and cost (SPEC §4): max_turns, max_tokens_total and budget_usd are checked when a MODEL_CALL
 * is journaled STARTED and refused LIMIT_EXCEEDED naming the limit; a failed call to an unavailable
 * model is not a turn; turns and tokens count per attempt, money across attempts. Cost comes from the
 * engine's price table. A write's STARTED is held to the spending limits too (tokens and money), not
 * to max_turns: the last turn a node allows may ask for a write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, type GqlResult, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { events, startTriage, taskOf, triageProcess } from './helpers.js';

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: [
      CRM_SERVER(),
      triageProcess({ key: 'turns', topic: 't-turns', limits: '{ max_turns: 2 }' }),
      triageProcess({ key: 'turns1', topic: 't-turns1', limits: '{ max_turns: 1 }' }),
      triageProcess({ key: 'tokens', topic: 't-tokens', limits: '{ max_tokens_total: 1500 }' }),
      triageProcess({ key: 'budget', topic: 't-budget', limits: '{ budget_usd: 0.001 }' }),
      triageProcess({ key: 'budgetw', topic: 't-budgetw', limits: '{ budget_usd: 0.001 }' }).replace(
        'crm/send_email]',
        'crm/send_email, crm/refund, crm/get_order, crm/find_refund]',
      ),
    ].join('---'),
  });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker', { topics: ['*'] }), 'w-1');
});
afterAll(() => engine?.close());

async function take(key: string, topic: string): Promise<{ id: string; task: Locked }> {
  const id = await startTriage(engine, 'C-42', key);
  const task = await w.fetchOne({ topic });
  expect(task.processInstanceId).toBe(id);
  return { id, task };
}

async function turn(task: Locked, seq: number, model = 'gemini-3.6-flash') {
  await w.model(task, seq, 'STARTED', { model, request: { model, messagesHash: `h${seq}` } });
  return w.model(task, seq, 'COMPLETED', { model, request: { model, messagesHash: `h${seq}` } });
}

function expectLimit(r: GqlResult<unknown>, limit: string, used: number, max: number) {
  expect(codeOf(r)).toBe('LIMIT_EXCEEDED');
  expect(r.errors?.[0].extensions).toMatchObject({ limit, used, max });
}

describe('agent limits', () => {
  it('max_turns: the third model call of the attempt is refused, and stays refused', async () => {
    const { id, task } = await take('turns', 't-turns');
    await turn(task, 1);
    await turn(task, 2);
    const n = (await events(engine, id)).length;
    expectLimit(
      await w.journalRaw(task, 3, {
        kind: 'MODEL_CALL',
        state: 'STARTED',
        model: 'gemini-3.6-flash',
        request: { m: 3 },
      }),
      'max_turns',
      2,
      2,
    );
    expectLimit(
      await w.journalRaw(task, 3, {
        kind: 'MODEL_CALL',
        state: 'STARTED',
        model: 'gpt-4.1-mini',
        request: { m: 3 },
      }),
      'max_turns',
      2,
      2,
    );
    expect((await events(engine, id)).length).toBe(n);
    // Tool calls are not model turns: a read can still be journaled.
    await w.tool(task, 3, 'crm/get_customer', 'COMPLETED', { customerId: 'C-42' }, {});
    expect((await taskOf(engine, task.id)).steps).toHaveLength(3);
    // A new attempt starts a new conversation: its turns count from zero.
    expect((await w.failRaw(task, 'MODEL_GAVE_UP')).errors).toBeUndefined();
    const next = await w.fetchOne({ topic: 't-turns', waitMs: 3000 });
    expect(next).toMatchObject({ id: task.id, attempt: 2 });
    await turn(next, 1);
  });

  it('a FAILED call to an unavailable model is not a turn; the fallback answers and counts', async () => {
    const { task } = await take('turns1', 't-turns1');
    await w.model(task, 1, 'STARTED');
    const failed = await w.model(task, 1, 'FAILED', { error: 'model unavailable (503)' });
    expect(failed.step.state).toBe('FAILED');
    const fb = await turn(task, 2, 'gpt-4.1-mini');
    expect(fb.step.costUsd).toBeCloseTo((1000 * 0.4 + 100 * 1.6) / 1e6, 12);
    expectLimit(
      await w.journalRaw(task, 3, {
        kind: 'MODEL_CALL',
        state: 'STARTED',
        model: 'gpt-4.1-mini',
        request: { m: 3 },
      }),
      'max_turns',
      1,
      1,
    );
  });

  it('max_tokens_total counts the tokens of the attempt', async () => {
    const { task } = await take('tokens', 't-tokens');
    const first = await turn(task, 1);
    expect(first.step.usage).toMatchObject({ inputTokens: 1000, outputTokens: 100, totalTokens: 1100 });
    // A worker cannot under-report: totalTokens is at least input + output.
    await w.model(task, 2, 'STARTED');
    const low = await w.model(task, 2, 'COMPLETED', {
      usage: { inputTokens: 1000, outputTokens: 100, totalTokens: 1 },
    });
    expect(low.step.usage).toMatchObject({ totalTokens: 1100 });
    expectLimit(
      await w.journalRaw(task, 3, {
        kind: 'MODEL_CALL',
        state: 'STARTED',
        model: 'gemini-3.6-flash',
        request: { m: 3 },
      }),
      'max_tokens_total',
      2200,
      1500,
    );
  });

  it('budget_usd counts the money of every attempt, priced by the engine', async () => {
    const { task } = await take('budget', 't-budget');
    const a = await turn(task, 1);
    expect(a.step.costUsd).toBeCloseTo(0.00055, 12);
    // A worker cannot set its own price: usage has no costUsd, and saying one is a caller error (not INTERNAL).
    await w.model(task, 2, 'STARTED');
    const priced = await w.journalRaw(task, 2, {
      kind: 'MODEL_CALL',
      state: 'COMPLETED',
      model: 'gemini-3.6-flash',
      request: { model: 'gemini-3.6-flash', messagesHash: 'h2' },
      usage: { inputTokens: 1000, outputTokens: 100, costUsd: 0 },
    });
    expect(codeOf(priced)).not.toBe('INTERNAL');
    expect(priced.errors![0].message).toMatch(/costUsd/);
    const b = await w.model(task, 2, 'COMPLETED');
    expect(b.step.costUsd).toBeCloseTo(0.00055, 12);
    const r = await w.journalRaw(task, 3, {
      kind: 'MODEL_CALL',
      state: 'STARTED',
      model: 'gemini-3.6-flash',
      request: { m: 3 },
    });
    expect(codeOf(r)).toBe('LIMIT_EXCEEDED');
    expect(r.errors![0].extensions).toMatchObject({ limit: 'budget_usd', used: 0.0011, max: 0.001 });
    // Money spent is spent: attempt 2 cannot start a model call either.
    await w.failRaw(task, 'LIMIT_EXCEEDED');
    const next = await w.fetchOne({ topic: 't-budget', waitMs: 3000 });
    expect(next.attempt).toBe(2);
    const r2 = await w.journalRaw(next, 1, {
      kind: 'MODEL_CALL',
      state: 'STARTED',
      model: 'gemini-3.6-flash',
      request: { m: 1 },
    });
    expect(codeOf(r2)).toBe('LIMIT_EXCEEDED');
    expect(r2.errors![0].extensions!.limit).toBe('budget_usd');
  });

  it("budget_usd: a write's STARTED after the budget is spent is refused, saying what was spent", async () => {
    const { id, task } = await take('budgetw', 't-budgetw');
    await turn(task, 1);
    // within the budget, a write starts (and gets its key)
    const first = await w.tool(task, 2, 'crm/create_ticket', 'STARTED', { customerId: 'C-42', n: 1 });
    expect(first.idempotencyKey).toMatch(/^abada-/);
    await w.tool(
      task,
      2,
      'crm/create_ticket',
      'COMPLETED',
      { customerId: 'C-42', n: 1 },
      { ticketId: 'T-1' },
    );
    await turn(task, 3);
    const n = (await events(engine, id)).length;
    const write = {
      kind: 'TOOL_CALL',
      state: 'STARTED',
      toolRef: 'crm/create_ticket',
      request: { callId: 'call_4', arguments: { customerId: 'C-42', n: 2 } },
    };
    const r = await w.journalRaw(task, 4, write);
    expectLimit(r, 'budget_usd', 0.0011, 0.001);
    expect(r.errors![0].message).toMatch(/\$0\.0011 spent of \$0\.001.*write may not start/);
    // nothing was journaled, and it stays refused
    expect((await events(engine, id)).length).toBe(n);
    expect(codeOf(await w.journalRaw(task, 4, write))).toBe('LIMIT_EXCEEDED');
    // nor is a person asked to approve a write that could not start
    const proposal = await w.journalRaw(task, 4, {
      kind: 'TOOL_CALL',
      state: 'PROPOSED',
      toolRef: 'crm/refund',
      request: { callId: 'call_4', arguments: { orderId: '5531', amount: 89, currency: 'EUR' } },
    });
    expectLimit(proposal, 'budget_usd', 0.0011, 0.001);
    expect((await events(engine, id)).length).toBe(n);
    // a read is not a write: it still runs
    await w.tool(task, 4, 'crm/get_customer', 'COMPLETED', { customerId: 'C-42' }, {});
    expect((await taskOf(engine, task.id)).steps.map((s) => s.state)).toEqual([
      'COMPLETED',
      'COMPLETED',
      'COMPLETED',
      'COMPLETED',
    ]);
  });

  it('max_turns does not hold back the write the last allowed turn asked for', async () => {
    const { task } = await take('turns1', 't-turns1');
    await turn(task, 1);
    const r = await w.tool(task, 2, 'crm/create_ticket', 'STARTED', { customerId: 'C-42' });
    expect(r.step.state).toBe('STARTED');
  });
});
