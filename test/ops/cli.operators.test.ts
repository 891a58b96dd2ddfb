/**
 * The operator's CLI commands of SPEC §15.6, each as a real child process against a running engine:
 * suspend, resume, incident resolve and retry, price set (and list), key. Exit codes: 0 ok, 1 refused
 * by the engine, 2 usage, 3 not authenticated or unreachable; --json prints what the engine answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER, Q } from '../helpers/fixtures.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { incidentsOf, runToWrite, startTriage, triageProcess } from '../engine/core/helpers.js';
import { abada } from './cli-helpers.js';

let engine: TestEngine;
let admin: Record<string, string>;
let w: WorkerSim;

beforeAll(async () => {
  engine = await startTestEngine();
  admin = { ABADA_URL: engine.url, ABADA_TOKEN: engine.adminToken };
  await engine.ok(engine.adminToken, Q.deploy, {
    s: [
      CRM_SERVER(),
      triageProcess({ key: 'ops', topic: 't-ops' }),
      triageProcess({ key: 'once', topic: 't-once', maxAttempts: 1 }),
      triageProcess({ key: 'keyed', topic: 't-keyed' }),
    ].join('---'),
  });
  w = new WorkerSim(
    engine,
    await engine.principal('WORKER', 'ops-w', { topics: ['t-ops', 't-once', 't-keyed'] }),
    'ops-w',
  );
});
afterAll(() => engine?.close());

const json = (r: { stdout: string }) => JSON.parse(r.stdout);

describe('abada operator commands', () => {
  it('suspend and resume an instance', async () => {
    const id = await startTriage(engine, 'C-42', 'ops');
    const suspended = await abada(['suspend', id], admin);
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(suspended.stdout.trim()).toBe(`${id} SUSPENDED`);
    const twice = await abada(['suspend', id], admin);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('VALIDATION_FAILED');
    const resumed = await abada(['resume', id, '--json'], admin);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(json(resumed)).toMatchObject({ id, state: 'ACTIVE' });
    const [again, none, noToken, down] = await Promise.all([
      abada(['resume', id], admin),
      abada(['suspend'], admin),
      abada(['suspend', id], { ABADA_URL: engine.url, ABADA_TOKEN: 'wrong' }),
      abada(['resume', id], { ABADA_URL: 'http://127.0.0.1:9', ABADA_TOKEN: 'x' }),
    ]);
    expect([again.code, none.code, noToken.code, down.code]).toEqual([1, 2, 3, 3]);
  });

  it('price set (admin, valid prices) and price list', async () => {
    const human = await engine.principal('HUMAN', 'ops-h', { groups: ['ops'] });
    const [set, negative, missing, forbidden] = await Promise.all([
      abada(['price', 'set', 'acme-cli', '--input', '1.5', '--output', '6', '--json'], admin),
      abada(['price', 'set', 'acme-cli', '--input=-1', '--output', '6'], admin),
      abada(['price', 'set', 'acme-cli', '--input', '1'], admin),
      abada(['price', 'set', 'acme-cli', '--input', '1', '--output', '2'], {
        ABADA_URL: engine.url,
        ABADA_TOKEN: human,
      }),
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(json(set)).toMatchObject({ model: 'acme-cli', inputUsdPerMTok: 1.5, outputUsdPerMTok: 6 });
    expect(negative.code).toBe(1);
    expect(negative.stderr).toContain('VALIDATION_FAILED');
    expect(missing.code).toBe(2);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain('FORBIDDEN');
    const list = await abada(['price', 'list', 'acme-cli', '--history', '--json'], admin);
    expect(list.code, list.stderr).toBe(0);
    expect(json(list)).toMatchObject([{ model: 'acme-cli', inputUsdPerMTok: 1.5 }]);
    expect((await abada(['price', 'list'], admin)).stdout).toMatch(/acme-cli\s+1\.5\s+6/);
  });

  it('key: the step that holds an idempotency key and its sends', async () => {
    const id = await startTriage(engine, 'C-42', 'keyed');
    const task = await w.fetchOne({ topic: 't-keyed' });
    const key = (await runToWrite(w, task)).idempotencyKey!;
    const [found, human, missing, none] = await Promise.all([
      abada(['key', key, '--json'], admin),
      abada(['key', key], admin),
      abada(['key', 'abada-unknown'], admin),
      abada(['key'], admin),
    ]);
    expect(found.code, found.stderr).toBe(0);
    expect(json(found)).toMatchObject({
      key,
      processInstanceId: id,
      taskId: task.id,
      attempt: 1,
      sequence: 4,
      outcome: 'STARTED',
      sends: [{ reason: 'CREATED', attempt: 1, workerId: 'ops-w' }],
    });
    expect(human.stdout).toContain(`task ${task.id} attempt 1 step 4 (crm/create_ticket): STARTED`);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('NOT_FOUND');
    expect(none.code).toBe(2);
  });

  it('incident retry reopens the failed task; incident resolve closes with a comment', async () => {
    await startTriage(engine, 'C-42', 'once');
    const task = await w.fetchOne({ topic: 't-once' });
    await w.failRaw(task, 'MODEL_GAVE_UP');
    const [failed] = await incidentsOf(engine, { type: 'TASK_FAILED', taskId: task.id });
    const retried = await abada(['incident', 'retry', failed.id], admin);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout.trim()).toBe(`task ${task.id} OPEN on attempt 2`);
    // the task is no longer FAILED: a second retry is refused
    expect((await abada(['incident', 'retry', failed.id], admin)).code).toBe(1);

    const bad = await engine.gql(w.token, Q.fetch, {
      input: { workerId: 'ops-w', maxTasks: 1, topics: [{ topicName: 'ledger', lockDurationMs: 1000 }] },
    });
    expect(bad.errors).toBeDefined();
    const [rejected] = await incidentsOf(engine, { type: 'FETCH_REJECTED' });
    const [noComment, noTask, unknown] = await Promise.all([
      abada(['incident', 'resolve', rejected.id], admin),
      abada(['incident', 'retry', rejected.id], admin),
      abada(['incident', 'resolve', '00000000-0000-0000-0000-000000000000', '-m', 'x'], admin),
    ]);
    expect([noComment.code, noTask.code, unknown.code]).toEqual([2, 1, 1]);
    expect(noTask.stderr).toContain('names no task');
    const resolved = await abada(
      ['incident', 'resolve', rejected.id, '-m', 'topic removed', '--json'],
      admin,
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(json(resolved)).toMatchObject({
      id: rejected.id,
      state: 'RESOLVED',
      resolution: { comment: 'topic removed' },
    });
    const twice = await abada(['incident', 'resolve', rejected.id, '-m', 'again'], admin);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('ALREADY_DECIDED');
  });
});
