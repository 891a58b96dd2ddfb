/**
 * The worker's journal batcher (server/worker/batcher.ts) against a real engine, through a proxy that
 * counts requests and can break them: journal calls of several tasks made at once go in one journalBatch
 * request and one engine transaction; each call gets the answer — or the refusal, code and message —
 * it gets alone; a batch that gets no answer, or an engine without journalBatch, falls back to each call
 * alone with its own retries and nothing is lost or doubled (also when the engine committed the batch and
 * only its answer was lost); a call whose lease is aborted ends at once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLRequestError, UnreachableError } from '../../server/client/index.js';
import { journalGroups } from '../../server/engine/journal/group.js';
import { EngineClient, type StepWrite } from '../../server/worker/graphql.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { modelStep } from '../helpers/steps.js';
import { type Locked, setupSeeds, WorkerSim } from '../helpers/worker-sim.js';

type Mode = 'pass' | 'drop-batch' | 'lose-answer' | 'old-engine';

let engine: TestEngine;
let w: WorkerSim;
let proxy: { url: string; mode: Mode; operations: string[]; close(): Promise<void> };

/** Forwards to the engine; `drop-batch` cuts a journalBatch off unanswered, `old-engine` refuses it. */
async function startProxy(target: string) {
  const state = { mode: 'pass' as Mode, operations: [] as string[] };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const op = /\b(journalBatch|journalSteps|journalStep|fetchAndLock)\b/.exec(body)?.[1] ?? 'other';
    state.operations.push(op);
    if (op === 'journalBatch' && state.mode === 'drop-batch') return req.socket.destroy();
    if (op === 'journalBatch' && state.mode === 'old-engine') {
      const error = { message: 'Cannot query field "journalBatch" on type "Mutation".' };
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({ errors: [{ ...error, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }),
      );
    }
    const up = http.request(target, { method: 'POST', headers: req.headers }, (r) => {
      // the engine committed the batch; its answer never reaches the worker
      if (op === 'journalBatch' && state.mode === 'lose-answer') {
        r.resume();
        r.on('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

beforeAll(async () => {
  engine = await startTestEngine();
  const { worker } = await setupSeeds(engine);
  w = new WorkerSim(engine, worker);
  proxy = await startProxy(`${engine.url}/graphql`);
});
afterAll(async () => {
  await proxy?.close();
  await engine?.close();
});

/** A model call step as the worker writes it. */
const model = (sequence: number, state: string) => modelStep(sequence, state) as StepWrite;
const ids = (t: Locked) => ({ taskId: t.id, workerId: w.workerId, attempt: t.attempt });
const retry = () => ({ retryUntil: Date.now() + 10_000 });

async function stepsOf(t: Locked): Promise<string[]> {
  const inst = (await engine.ok(engine.adminToken, Q.instance, { id: t.processInstanceId })).processInstance;
  return inst!.tasks[0].steps.map((s: { sequence: number; state: string }) => `${s.sequence}:${s.state}`);
}

describe('the worker journal batcher', () => {
  it('sends calls of several tasks made at once in one request and one transaction', async () => {
    proxy.mode = 'pass';
    const tasks = await w.leaseTriage(8);
    const client = new EngineClient(proxy.url, w.token);
    const groups = journalGroups(engine.context).counts;
    const before = groups.groups;
    proxy.operations.length = 0;
    const answers = await Promise.allSettled(
      tasks.map((t, i) =>
        i === 3
          ? client.journalStep({ ...ids(t), ...model(2, 'STARTED') }, retry()) // refused: 2 cannot come first
          : i % 2
            ? client.journalSteps({ ...ids(t), steps: [model(1, 'STARTED'), model(1, 'COMPLETED')] }, retry())
            : client.journalStep({ ...ids(t), ...model(1, 'STARTED') }, retry()).then((r) => [r]),
      ),
    );
    expect(proxy.operations).toEqual(['journalBatch']);
    expect(client.journal.counts).toMatchObject({
      calls: 8,
      requests: 1,
      batches: 1,
      batched: 8,
      fallbacks: 0,
    });
    expect(groups.groups - before).toBe(1);
    for (const [i, a] of answers.entries()) {
      if (i === 3) continue;
      expect(a.status).toBe('fulfilled');
      const states = (a as PromiseFulfilledResult<{ step: { state: string } }[]>).value.map(
        (r) => r.step.state,
      );
      expect(states).toEqual(i % 2 ? ['STARTED', 'COMPLETED'] : ['STARTED']);
      expect(await stepsOf(tasks[i])).toEqual([i % 2 ? '1:COMPLETED' : '1:STARTED']);
    }
    // the refusal is the one the call gets alone: same code, same message, no batch index
    const refused = (answers[3] as PromiseRejectedResult).reason;
    expect(refused).toBeInstanceOf(GraphQLRequestError);
    const aloneClient = new EngineClient(engine.url, w.token, { batchJournal: false });
    const alone = await aloneClient.journalStep({ ...ids(tasks[3]), ...model(2, 'STARTED') }).catch((e) => e);
    expect(alone).toBeInstanceOf(GraphQLRequestError);
    expect(refused.code).toBe('SEQUENCE_OUT_OF_ORDER');
    expect({ code: refused.code, message: refused.message, details: refused.details }).toEqual({
      code: alone.code,
      message: alone.message,
      details: alone.details,
    });
    expect(await stepsOf(tasks[3])).toEqual([]);

    // a call alone goes out at once, as the request it always was
    proxy.operations.length = 0;
    await client.journalStep({ ...ids(tasks[0]), ...model(1, 'COMPLETED') }, retry());
    expect(proxy.operations).toEqual(['journalStep']);
  });

  it('a batch without an answer: each call alone, with its own retries; nothing lost or doubled', async () => {
    const tasks = await w.leaseTriage(4);
    const client = new EngineClient(proxy.url, w.token);
    proxy.mode = 'drop-batch';
    proxy.operations.length = 0;
    const out = await Promise.all(
      tasks.map((t) => client.journalStep({ ...ids(t), ...model(1, 'STARTED') }, retry())),
    );
    expect(out.map((r) => r.step.state)).toEqual(['STARTED', 'STARTED', 'STARTED', 'STARTED']);
    expect(client.journal.counts.fallbacks).toBe(4);
    expect(proxy.operations.filter((o) => o === 'journalStep')).toHaveLength(4);
    for (const t of tasks) expect(await stepsOf(t)).toEqual(['1:STARTED']);
    proxy.mode = 'pass';
  });

  it('a batch committed whose answer was lost: each call re-sent alone gets the steps as they stand', async () => {
    const tasks = await w.leaseTriage(3);
    const client = new EngineClient(proxy.url, w.token);
    proxy.mode = 'lose-answer';
    proxy.operations.length = 0;
    const out = await Promise.all(
      tasks.map((t) =>
        client.journalSteps({ ...ids(t), steps: [model(1, 'STARTED'), model(1, 'COMPLETED')] }, retry()),
      ),
    );
    proxy.mode = 'pass';
    // (the transport sends a request cut off on a kept-alive socket once more: the batch may go twice)
    expect(proxy.operations.filter((o) => o === 'journalBatch').length).toBeGreaterThanOrEqual(1);
    expect(proxy.operations.filter((o) => o === 'journalSteps')).toHaveLength(3);
    expect(client.journal.counts.fallbacks).toBe(3);
    for (const r of out) expect(r.map((x) => x.step.state)).toEqual(['COMPLETED', 'COMPLETED']);
    // one step each, journaled once
    for (const t of tasks) expect(await stepsOf(t)).toEqual(['1:COMPLETED']);
  });

  it('an engine without journalBatch: batching turns off, every call alone', async () => {
    const tasks = await w.leaseTriage(3);
    const client = new EngineClient(proxy.url, w.token);
    proxy.mode = 'old-engine';
    proxy.operations.length = 0;
    const first = await Promise.all(
      tasks.map((t) => client.journalStep({ ...ids(t), ...model(1, 'STARTED') })),
    );
    expect(first).toHaveLength(3);
    const second = await Promise.all(
      tasks.map((t) => client.journalStep({ ...ids(t), ...model(1, 'COMPLETED') })),
    );
    expect(second.map((r) => r.step.state)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    // one refused batch, then only calls alone
    expect(proxy.operations.filter((o) => o === 'journalBatch')).toHaveLength(1);
    expect(proxy.operations.filter((o) => o === 'journalStep')).toHaveLength(6);
    proxy.mode = 'pass';
  });

  it('a call whose lease is aborted while it waits ends at once, and the others go on', async () => {
    const tasks = await w.leaseTriage(3);
    const client = new EngineClient(proxy.url, w.token);
    const lease = new AbortController();
    const calls = tasks.map((t, i) =>
      client.journalStep({ ...ids(t), ...model(1, 'STARTED') }, i === 1 ? { signal: lease.signal } : {}),
    );
    lease.abort(new Error('lease lost'));
    const [a, b, c] = await Promise.allSettled(calls);
    expect(b.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(UnreachableError);
    expect([a.status, c.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(await stepsOf(tasks[1])).toEqual([]);
  });
});
