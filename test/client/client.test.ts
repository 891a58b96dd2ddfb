/**
 * The shared GraphQL client against a real engine: refusals carry their SPEC §9 code and details, an
 * engine that is not there is an UnreachableError with its cause, sequential calls share one kept-alive
 * connection, and `raw` sends a body as it is.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  Deploy,
  GraphQLRequestError,
  Me,
  StartProcess,
  UnreachableError,
} from '../../server/client/index.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine?.close());

describe('the GraphQL client', () => {
  it('returns typed data for a typed document', async () => {
    const admin = createClient({ url: engine.url, token: engine.adminToken });
    const d = await admin.request(Me, {});
    expect(d.me.kind).toBe('ADMIN');
  });

  it('turns a refusal into GraphQLRequestError with the code and details', async () => {
    const anon = createClient({ url: engine.url });
    const unauthenticated = await anon.request(Me, {}).catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(GraphQLRequestError);
    expect((unauthenticated as GraphQLRequestError).code).toBe('UNAUTHENTICATED');

    const admin = anon.as(engine.adminToken);
    const notFound = await admin.request(StartProcess, { key: 'no-such-process' }).catch((e: unknown) => e);
    expect((notFound as GraphQLRequestError).code).toBe('NOT_FOUND');

    const invalid = await admin
      .request(Deploy, { source: 'kind: Process\nkey: [broken' })
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(GraphQLRequestError);
    const refused = invalid as GraphQLRequestError;
    expect(refused.code).toBe('VALIDATION_FAILED');
    expect(Array.isArray(refused.details.errors)).toBe(true);
    expect(refused.message.length).toBeGreaterThan(0);
  });

  it('execute returns errors instead of throwing them', async () => {
    const r = await createClient({ url: engine.url }).execute(Me, {});
    expect(r.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('an engine that is not there is UnreachableError with the cause kept', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await createClient({ url: `http://127.0.0.1:${port}` })
      .request(Me, {})
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnreachableError);
    expect(((e as Error).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('times out a request that is not answered in time, and honours an abort signal', async () => {
    const silent = http.createServer(() => {}); // reads the request, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const timedOut = await createClient({ url, timeoutMs: 100 })
        .request(Me, {})
        .catch((x: unknown) => x);
      expect(timedOut).toBeInstanceOf(UnreachableError);
      expect((timedOut as Error).message).toMatch(/did not answer within 100 ms/);

      const controller = new AbortController();
      const pending = createClient({ url }).request(Me, {}, { signal: controller.signal });
      controller.abort(new Error('stopping'));
      const aborted = await pending.catch((x: unknown) => x);
      expect(aborted).toBeInstanceOf(UnreachableError);
      expect(((aborted as Error).cause as Error).message).toBe('stopping');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('keeps one connection alive across sequential calls', async () => {
    const agent = new http.Agent({ keepAlive: true });
    const admin = createClient({ url: engine.url, token: engine.adminToken, agent });
    const first = await admin.raw(JSON.stringify({ query: '{ me { id } }' }));
    expect(first.reusedSocket).toBe(false);
    for (let i = 0; i < 5; i++) {
      const again = await admin.raw(JSON.stringify({ query: '{ me { id } }' }));
      expect(again.reusedSocket).toBe(true);
      await admin.request(Me, {});
    }
    const sockets = Object.values(agent.freeSockets).flat();
    expect(sockets).toHaveLength(1);
    agent.destroy();
  });

  it('raw sends any body and answers status, text and JSON', async () => {
    const admin = createClient({ url: engine.url, token: engine.adminToken });
    const broken = await admin.raw('{"query": "{ me { id } }"');
    expect(broken.status).toBe(400);
    const ok = await admin.raw(JSON.stringify({ query: '{ me { kind } }' }));
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual({ data: { me: { kind: 'ADMIN' } } });
    const asNobody = await admin.raw(JSON.stringify({ query: '{ me { kind } }' }), {
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(
      (asNobody.json() as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code,
    ).toBe('UNAUTHENTICATED');
  });
});
