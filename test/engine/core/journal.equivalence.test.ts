/**
 * A journalSteps batch (server/engine/journal/: one load, the rules in memory, one write for the whole
 * batch) must answer exactly like journaling the same steps one by one: the same journal rows,
 * the same history events in the same order, a valid hash chain, the same refusals and limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { scrapeMetric } from '../../helpers/metrics.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { startTriage, triageProcess } from './helpers.js';

const BATCH = `mutation($input: JournalStepsInput!) { journalSteps(input: $input) {
  idempotencyKey reused taskState step { sequence state digest idempotencyKey costUsd usage response } } }`;
const STEPS = `query($id: ID!) { externalTask(id: $id) { steps { attempt sequence kind state toolRef digest
  idempotencyKey reused response error usage costUsd } } }`;

let engine: TestEngine;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: [
      CRM_SERVER(),
      triageProcess({ key: 'same', topic: 't-same' }),
      triageProcess({ key: 'turns', topic: 't-turns', limits: '{ max_turns: 2 }' }),
      triageProcess({ key: 'tokens', topic: 't-tokens', limits: '{ max_tokens_total: 1500 }' }),
    ].join('---'),
  });
  w = new WorkerSim(engine, await engine.principal('WORKER', 'agent-worker', { topics: ['*'] }), 'w-1');
});
afterAll(() => engine?.close());

const model = (sequence: number, state: string, tokens = 10) => ({
  sequence,
  kind: 'MODEL_CALL',
  state,
  model: 'gemini-3.6-flash',
  request: { model: 'gemini-3.6-flash', messagesHash: `h${sequence}` },
  ...(state === 'COMPLETED'
    ? {
        response: { role: 'assistant', content: `turn ${sequence}` },
        usage: { inputTokens: tokens, outputTokens: 5 },
      }
    : {}),
});
const tool = (sequence: number, state: string, toolRef: string, extra: Record<string, unknown> = {}) => ({
  sequence,
  kind: 'TOOL_CALL',
  state,
  toolRef,
  request: { callId: `c${sequence}`, arguments: { customerId: 'C-42' } },
  ...(state === 'COMPLETED' ? { response: { ok: sequence } } : {}),
  ...extra,
});

/** Seed 002's attempt: model, read, model, keyed write (ended FAILED then a retry), model. */
const STORY = [
  model(1, 'STARTED'),
  model(1, 'COMPLETED', 100),
  tool(2, 'COMPLETED', 'crm/get_customer'),
  model(3, 'STARTED'),
  model(3, 'COMPLETED', 200),
  tool(4, 'STARTED', 'crm/create_ticket'),
  tool(4, 'FAILED', 'crm/create_ticket', { error: 'CRM timed out' }),
  tool(5, 'STARTED', 'crm/create_ticket'),
  tool(5, 'COMPLETED', 'crm/create_ticket'),
  model(6, 'STARTED'),
  model(6, 'COMPLETED', 300),
];

const batch = (t: Locked, steps: unknown[]) =>
  engine.gql(w.token, BATCH, { input: { taskId: t.id, workerId: w.workerId, attempt: t.attempt, steps } });

async function take(key: string, topic: string) {
  const id = await startTriage(engine, 'C-42', key);
  return { id, task: await w.fetchOne({ topic }) };
}

/** The journal and history of an instance with the ids that differ between instances taken out. */
async function recordOf(instanceId: string, taskId: string) {
  const steps = (await engine.ok(engine.adminToken, STEPS, { id: taskId })).externalTask.steps.map(
    (s: Record<string, unknown>) => ({ ...s, idempotencyKey: s.idempotencyKey ? 'key' : null }),
  );
  const inst = (await engine.ok(engine.adminToken, Q.instance, { id: instanceId })).processInstance;
  const history = inst!.history
    .filter((h) => h.eventType.startsWith('STEP_'))
    .map((h) => ({ ...h, taskId: undefined, actor: undefined, row: undefined }));
  const audit = (
    await engine.ok(
      engine.adminToken,
      `query($id: ID!) { verifyAudit(processInstanceId: $id) { valid rows events firstBrokenSeq } }`,
      { id: instanceId },
    )
  ).verifyAudit;
  return { steps, history, audit };
}

/** How many journal calls of a kind this engine process committed (from /metrics). */
async function journalCalls(kind: 'single' | 'batch') {
  return scrapeMetric(engine.url, `abada_journal_calls_total{kind="${kind}"}`);
}

describe('journalSteps batch path', () => {
  it('writes the same journal and history events as journaling one step at a time, in fewer rows', async () => {
    const before = await journalCalls('batch');
    const one = await take('same', 't-same');
    for (const s of STORY) await w.journal(one.task, s.sequence, s);
    const many = await take('same', 't-same');
    const first = await batch(many.task, STORY.slice(0, 6));
    expect(first.errors).toBeUndefined();
    // a batch may start with steps already journaled: they are answered from the journal
    const second = await batch(many.task, STORY.slice(4));
    expect(second.errors).toBeUndefined();
    expect(second.data.journalSteps[1].idempotencyKey).toBe(first.data.journalSteps[5].idempotencyKey);
    // both batches were committed, each as one call
    expect(await journalCalls('batch')).toBe(before + 2);
    const a = await recordOf(one.id, one.task.id);
    const b = await recordOf(many.id, many.task.id);
    expect(b.steps).toEqual(a.steps);
    expect(b.history).toEqual(a.history);
    expect(b.history.map((h: { eventType: string }) => h.eventType)).toHaveLength(STORY.length);
    expect(a.audit.valid).toBe(true);
    // a batch is one commit: its events share a chained row, and every event verifies
    expect(b.audit).toMatchObject({ valid: true, events: a.audit.events, firstBrokenSeq: null });
    expect(b.audit.rows).toBeLessThan(a.audit.rows);
    // priced by the engine, and the usage adds up in memory and in the database alike
    expect(b.steps.map((s: { costUsd: number | null }) => s.costUsd).filter(Boolean)).toHaveLength(3);
  });

  it('counts turns journaled earlier in the same batch against max_turns', async () => {
    const { id, task } = await take('turns', 't-turns');
    const r = await batch(task, [
      model(1, 'STARTED'),
      model(1, 'COMPLETED'),
      model(2, 'STARTED'),
      model(2, 'COMPLETED'),
      model(3, 'STARTED'),
    ]);
    expect(codeOf(r)).toBe('LIMIT_EXCEEDED');
    expect(r.errors![0].extensions).toMatchObject({ index: 4, limit: 'max_turns', used: 2, max: 2 });
    expect((await recordOf(id, task.id)).steps).toEqual([]);
    // without the third turn the batch goes through, and the third is refused on its own
    expect(
      (await batch(task, [model(1, 'STARTED'), model(1, 'COMPLETED'), model(2, 'STARTED')])).errors,
    ).toBeUndefined();
    expect(
      (await batch(task, [model(2, 'COMPLETED'), model(3, 'STARTED')])).errors![0].extensions,
    ).toMatchObject({
      code: 'LIMIT_EXCEEDED',
      index: 1,
      limit: 'max_turns',
    });
  });

  it('counts tokens of earlier steps of the batch against max_tokens_total', async () => {
    const { task } = await take('tokens', 't-tokens');
    const r = await batch(task, [model(1, 'STARTED'), model(1, 'COMPLETED', 2000), model(2, 'STARTED')]);
    expect(codeOf(r)).toBe('LIMIT_EXCEEDED');
    expect(r.errors![0].extensions).toMatchObject({ index: 2, limit: 'max_tokens_total' });
  });

  it('refuses a divergent re-send inside a batch like a single journalStep does', async () => {
    const { task } = await take('same', 't-same');
    expect((await batch(task, STORY.slice(0, 3))).errors).toBeUndefined();
    const changed = { ...STORY[2], request: { callId: 'c2', arguments: { customerId: 'C-7' } } };
    const r = await batch(task, [changed, STORY[3]]);
    expect(codeOf(r)).toBe('DIVERGENT_STEP');
    expect(r.errors![0].extensions!.index).toBe(0);
    const single = await w.journalRaw(task, 2, changed);
    expect(codeOf(single)).toBe('DIVERGENT_STEP');
  });

  it('a refused batch leaves the connection usable for the next one', async () => {
    const { task } = await take('same', 't-same');
    expect((await batch(task, STORY.slice(0, 5))).errors).toBeUndefined();
    const refused = await batch(task, [STORY[0], { ...STORY[6], sequence: 9 }]);
    expect(codeOf(refused)).toBe('SEQUENCE_OUT_OF_ORDER');
    expect((await batch(task, STORY.slice(5, 7))).errors).toBeUndefined();
    expect(
      (await recordOf(task.processInstanceId, task.id)).steps.map((x: { state: string }) => x.state),
    ).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED']);
  });
});
