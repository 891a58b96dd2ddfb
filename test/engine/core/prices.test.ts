/**
 * Model prices (SPEC §15.6): setModelPrice is an admin's (FORBIDDEN otherwise, VALIDATION_FAILED for a
 * negative or absurd price); each change is a new row, the latest in force; a call is priced with it at
 * once and budget_usd holds. Deploy refuses budget_usd on a node whose model or any fallback model has
 * no price (ABADA-APL-MODEL-002, at the model's line, saying to call setModelPrice).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../../server/client/index.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { WorkerSim } from '../../helpers/worker-sim.js';
import { startTriage, triageProcess } from './helpers.js';

const P = {
  set: graphql(`
    mutation($input: SetModelPriceInput!) {
      setModelPrice(input: $input) { model inputUsdPerMTok outputUsdPerMTok validFrom setBy }
    }
  `),
  list: graphql(`
    query($model: String, $history: Boolean) {
      modelPrices(model: $model, history: $history) { model inputUsdPerMTok outputUsdPerMTok validFrom setBy }
    }
  `),
};

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
  await engine.ok(engine.adminToken, Q.deploy, { s: CRM_SERVER() });
});
afterAll(() => engine?.close());

/** A triage node on `topic` running `model` with `fallback`, with the given limits. */
const acme = (key: string, model: string, fallback: string, limits: string) =>
  triageProcess({ key, topic: `t-${key}`, limits })
    .replace('model: gemini-3.6-flash', `model: ${model}`)
    .replace('fallback_models: [gpt-4.1-mini]', `fallback_models: [${fallback}]`);

const price = (model: string, i: number, o: number, token = engine.adminToken) =>
  engine.gql(token, P.set, { input: { model, inputUsdPerMTok: i, outputUsdPerMTok: o } });

describe('setModelPrice', () => {
  it('is for admins, and refuses negative and absurd prices', async () => {
    const human = await engine.principal('HUMAN', 'ops-h', { groups: ['ops'] });
    const worker = await engine.principal('WORKER', 'ops-w', { topics: ['x'] });
    expect(codeOf(await price('acme-0', 1, 2, human))).toBe('FORBIDDEN');
    expect(codeOf(await price('acme-0', 1, 2, worker))).toBe('FORBIDDEN');
    for (const [i, o, path] of [
      [-1, 2, 'inputUsdPerMTok'],
      [1, -0.01, 'outputUsdPerMTok'],
      [1, 1e9, 'outputUsdPerMTok'],
    ] as const) {
      const r = await price('acme-0', i, o);
      expect(codeOf(r)).toBe('VALIDATION_FAILED');
      expect(r.errors![0].extensions!.errors).toMatchObject([{ path }]);
    }
    expect(codeOf(await price('', 1, 2))).toBe('VALIDATION_FAILED');
    expect((await engine.ok(engine.adminToken, P.list, { model: 'acme-0' })).modelPrices).toEqual([]);
  });
});

describe('budget_usd needs prices', () => {
  it('deploy names the unpriced model, fallback too; with prices set the budget holds', async () => {
    const src = acme('acme', 'acme-1', 'acme-2', '{ budget_usd: 0.01 }');
    const lines = src.split('\n');
    const lineOf = (text: string) => lines.findIndex((l) => l.includes(text)) + 1;
    const refused = await engine.gql(engine.adminToken, Q.deploy, { s: src });
    expect(codeOf(refused)).toBe('VALIDATION_FAILED');
    const errors = refused.errors![0].extensions!.errors as {
      code: string;
      path: string;
      line: number;
      message: string;
    }[];
    expect(errors.map((e) => [e.code, e.path, e.line])).toEqual([
      ['ABADA-APL-MODEL-002', 'documents[0].nodes[0].model', lineOf('model: acme-1')],
      ['ABADA-APL-MODEL-002', 'documents[0].nodes[0].fallback_models[0]', lineOf('fallback_models')],
    ]);
    expect(errors[0].message).toMatch(/"acme-1" has no price.*setModelPrice/);

    // Only the fallback unpriced: still refused, naming it alone.
    await engine.ok(engine.adminToken, P.set, {
      input: { model: 'acme-1', inputUsdPerMTok: 1, outputUsdPerMTok: 10 },
    });
    const fallback = await engine.gql(engine.adminToken, Q.deploy, { s: src });
    expect(fallback.errors![0].extensions!.errors).toMatchObject([
      { code: 'ABADA-APL-MODEL-002', path: 'documents[0].nodes[0].fallback_models[0]' },
    ]);
    // Without budget_usd, no price is needed.
    await engine.ok(engine.adminToken, Q.deploy, {
      s: acme('acme-free', 'acme-9', 'acme-2', '{ max_turns: 3 }'),
    });

    await engine.ok(engine.adminToken, P.set, {
      input: { model: 'acme-2', inputUsdPerMTok: 1, outputUsdPerMTok: 1 },
    });
    // A price change is a new row: acme-1 now costs 2 + 20 per million, the history keeps both.
    const changed = await engine.ok(engine.adminToken, P.set, {
      input: { model: 'acme-1', inputUsdPerMTok: 2, outputUsdPerMTok: 20 },
    });
    expect(changed.setModelPrice).toMatchObject({ model: 'acme-1', setBy: expect.stringMatching(/^admin:/) });
    const history = (await engine.ok(engine.adminToken, P.list, { model: 'acme-1', history: true }))
      .modelPrices;
    expect(history.map((p) => p.inputUsdPerMTok)).toEqual([2, 1]);
    const current = (await engine.ok(engine.adminToken, P.list, {})).modelPrices;
    expect(current.find((p) => p.model === 'acme-1')).toMatchObject({
      inputUsdPerMTok: 2,
      outputUsdPerMTok: 20,
    });
    expect(current.find((p) => p.model === 'gpt-4.1-mini')).toMatchObject({ setBy: null });

    await engine.ok(engine.adminToken, Q.deploy, { s: src });
    const w = new WorkerSim(
      engine,
      await engine.principal('WORKER', 'acme-w', { topics: ['t-acme'] }),
      'acme-w',
    );
    await startTriage(engine, 'C-7', 'acme');
    const task = await w.fetchOne({ topic: 't-acme' });
    // 1000 in, 100 out at the new price: 0.002 + 0.002 = $0.004 a turn; the budget is $0.01
    for (const seq of [1, 2, 3]) {
      await w.model(task, seq, 'STARTED');
      const done = await w.model(task, seq, 'COMPLETED');
      expect(done.step.costUsd).toBeCloseTo(0.004, 12);
    }
    const r = await w.journalRaw(task, 4, {
      kind: 'MODEL_CALL',
      state: 'STARTED',
      model: 'acme-1',
      request: { m: 4 },
    });
    expect(codeOf(r)).toBe('LIMIT_EXCEEDED');
    expect(r.errors![0].extensions).toMatchObject({ limit: 'budget_usd', used: 0.012, max: 0.01 });
  });
});
