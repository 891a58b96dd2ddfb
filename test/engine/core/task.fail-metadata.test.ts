/**
 * Failure metadata (SPEC §15.5): failTask keeps its attempt metadata (model, provider, duration,
 * errorType…) on the task and in history, as completeTask does; read back through GraphQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../../server/client/index.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q, json } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { auditOk, instance, startTriage, triageProcess } from './helpers.js';

const FAIL = graphql(`mutation($input: FailTaskInput!) {
  failTask(input: $input) { id state attempt errorType metadata } }`);
const TASK = graphql(`query($id: ID!) { externalTask(id: $id) { id state attempt errorType metadata } }`);

let engine: TestEngine;
let token: string;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'failmeta', topic: 't-failmeta', maxAttempts: 2 })}`,
  });
  token = await engine.principal('WORKER', 'failmeta-worker', { topics: ['t-failmeta'] });
});
afterAll(() => engine?.close());

const META = {
  model: 'gemini-3.6-flash',
  provider: 'gemini',
  attempt: 1,
  durationMs: 1234,
  tools: ['crm/get_customer'],
  resultVariable: 'triage',
  promptHash: 'b'.repeat(64),
  inputTokens: 900,
  outputTokens: 80,
};

describe('failTask metadata', () => {
  it('is kept on the task and in history, errorType included, on each attempt', async () => {
    const w = new WorkerSim(engine, token, 'w-meta');
    const id = await startTriage(engine, 'C-7', 'failmeta');
    const a = await w.fetchOne({ topic: 't-failmeta' });
    const first = await engine.ok(token, FAIL, {
      input: {
        taskId: a.id,
        workerId: 'w-meta',
        attempt: 1,
        errorType: 'MODEL_UNAVAILABLE',
        errorMessage: 'no model answered',
        retryTimeoutMs: 0,
        metadata: META,
      },
    });
    expect(first.failTask).toMatchObject({ state: 'OPEN', attempt: 2, errorType: 'MODEL_UNAVAILABLE' });
    expect(json(first.failTask.metadata)).toMatchObject({ ...META, errorType: 'MODEL_UNAVAILABLE' });

    const b = await w.fetchOne({ topic: 't-failmeta', waitMs: 3000 });
    await engine.ok(token, FAIL, {
      input: {
        taskId: b.id,
        workerId: 'w-meta',
        attempt: 2,
        errorType: 'TOOL_ERROR',
        metadata: {
          ...META,
          attempt: 2,
          model: 'gpt-4.1-mini',
          provider: 'openai-compatible',
          durationMs: 55,
        },
      },
    });
    const task = (await engine.ok(engine.adminToken, TASK, { id: a.id })).externalTask!;
    expect(task).toMatchObject({ state: 'FAILED', attempt: 2, errorType: 'TOOL_ERROR' });
    expect(json(task.metadata)).toMatchObject({
      model: 'gpt-4.1-mini',
      provider: 'openai-compatible',
      attempt: 2,
      durationMs: 55,
      errorType: 'TOOL_ERROR',
    });

    const h = (await instance(engine, id)).history;
    const failed = h.filter((x) => x.eventType === 'ATTEMPT_FAILED' || x.eventType === 'TASK_FAILED');
    expect(failed.map((x) => [x.eventType, json(json(x.data).metadata)])).toEqual([
      [
        'ATTEMPT_FAILED',
        expect.objectContaining({
          model: 'gemini-3.6-flash',
          durationMs: 1234,
          errorType: 'MODEL_UNAVAILABLE',
        }),
      ],
      [
        'TASK_FAILED',
        expect.objectContaining({ model: 'gpt-4.1-mini', durationMs: 55, errorType: 'TOOL_ERROR' }),
      ],
    ]);
    // the prompt is never kept: only its hash
    expect(JSON.stringify(h)).not.toContain('Read the message from');
    await auditOk(engine, id);
  });
});
