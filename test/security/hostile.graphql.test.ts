/**
 * GraphQL abuse is refused early and cheaply: deep nesting, alias and fragment bombs, huge bodies,
 * batched requests, invalid JSON, huge variables. The server stays up and answers the next caller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine?.close());

/** Sends the body as it is (the client's raw escape), with the admin's token unless headers override it. */
async function post(body: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const res = await engine.client.as(engine.adminToken).raw(body, { headers });
  return { status: res.status, text: res.text, ms: performance.now() - t0 };
}

async function stillServes() {
  const r = await engine.gql(engine.adminToken, '{ me { kind } }');
  expect(r.data).toEqual({ me: { kind: 'ADMIN' } });
}

describe('hostile GraphQL input', () => {
  it('refuses deep nesting at validation', async () => {
    // processInstances → edges → node → tasks → steps … nested 6 times is 19 levels deep.
    const nested = `{ ${'processInstances { edges { node { '.repeat(6)}id${' } } }'.repeat(6)} }`;
    const r = await post(JSON.stringify({ query: nested }));
    const body = JSON.parse(r.text);
    expect(body.errors[0].extensions.code).toBe('VALIDATION_FAILED');
    expect(body.errors.some((e: { message: string }) => e.message.includes('nested deeper than'))).toBe(true);
    await stillServes();
  });

  it('refuses alias bombs', async () => {
    const q = `{ ${Array.from({ length: 200 }, (_, i) => `a${i}: me { id }`).join(' ')} }`;
    const r = await post(JSON.stringify({ query: q }));
    expect(r.text).toContain('aliases');
    expect(JSON.parse(r.text).errors[0].extensions.code).toBe('VALIDATION_FAILED');
    await stillServes();
  });

  it('refuses fragment bombs (exponential expansion through spreads)', async () => {
    const frags = ['fragment F0 on Principal { id name }'];
    for (let i = 1; i < 25; i++)
      frags.push(`fragment F${i} on Principal { ...F${i - 1} ... on Principal { ...F${i - 1} } }`);
    const q = `{ me { ...F24 } } ${frags.join(' ')}`;
    const r = await post(JSON.stringify({ query: q }));
    // Refused before expanding: expanded, F24 is 2^24 selections and would not answer for minutes, so
    // 5 s separates the two on any load.
    expect(r.ms).toBeLessThan(5000);
    const body = JSON.parse(r.text);
    expect(body.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
    await stillServes();
  });

  it('refuses a 10 MB body before reading it', async () => {
    const big = JSON.stringify({ query: '{ me { id } }', variables: { x: 'a'.repeat(10 * 1024 * 1024) } });
    const r = await post(big);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    await stillServes();
  });

  it('refuses batched requests', async () => {
    const r = await post(JSON.stringify([{ query: '{ me { id } }' }, { query: '{ me { id } }' }]));
    expect(r.status).toBeGreaterThanOrEqual(400);
    await stillServes();
  });

  it('answers invalid JSON with a 400 and a message', async () => {
    const r = await post('{"query": "{ me { id } }"');
    expect(r.status).toBe(400);
    expect(r.text.length).toBeGreaterThan(0);
    await stillServes();
  });

  it('refuses a journal payload over the size limit with a clear code, before touching the task', async () => {
    const worker = await engine.principal('WORKER', 'big-payloads', { topics: ['abada:agent'] });
    const r = await engine.gql(
      worker,
      'mutation($r: JSON!) { journalStep(input: {taskId: "00000000-0000-0000-0000-000000000000", workerId: "w", attempt: 1, sequence: 1, kind: MODEL_CALL, state: STARTED, model: "m", request: $r}) { reused } }',
      { r: { blob: 'x'.repeat(300 * 1024) } },
    );
    expect(r.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    expect(r.errors?.[0]?.message).toMatch(/limit is \d+/);
    await stillServes();
  });

  it('masks internal errors and never leaks stack traces', async () => {
    const r = await post(JSON.stringify({ query: '{ processInstance(id: "not-a-uuid") { id } }' }));
    expect(r.text).not.toMatch(/at \w+ \(|node_modules|stack/);
    await stillServes();
  });
});
