/**
 * The worker's fetch over node:http against a real HTTP server: what the model and MCP clients rely on
 * from fetch() — bodies, headers, streamed answers, compression, aborts, redirects, connection errors —
 * and the one rule of its own: a stale kept-alive socket resends only what the caller allows.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpFetch, httpFetch } from '../../server/worker/http-fetch.js';

let server: http.Server;
let base: string;
const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
/** /stale answers the first request on a socket and drops the socket on any later one, unanswered. */
const answeredOn = new WeakSet<object>();
let connections = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const path = req.url!;
      if (path === '/json') {
        res.writeHead(201, { 'content-type': 'application/json', 'x-two': 'a' });
        res.end(JSON.stringify({ echo: body, auth: req.headers.authorization }));
      } else if (path === '/empty') {
        res.writeHead(204).end();
      } else if (path === '/gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        res.end(zlib.gzipSync('compressed hello'));
      } else if (path === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        setTimeout(() => res.end('data: two\n\n'), 150);
      } else if (path === '/slow') {
        setTimeout(() => res.end('late'), 2_000);
      } else if (path === '/refused') {
        // chunked, as the MCP SDK's server answers a notification (202) or its GET stream (405)
        res.writeHead(405, { 'content-type': 'application/json' });
        res.write('{"error":"Method not allowed."}');
        res.end();
      } else if (path === '/moved') {
        res.writeHead(307, { location: '/json' }).end();
      } else if (path === '/stale') {
        if (answeredOn.has(req.socket)) req.socket.destroy();
        else {
          answeredOn.add(req.socket);
          res.end(`ok ${body}`);
        }
      } else {
        res.writeHead(404).end('no');
      }
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('the worker fetch over node:http', () => {
  it('sends method, headers and body, and reads status, headers and JSON', async () => {
    const r = await httpFetch(`${base}/json`, {
      method: 'POST',
      headers: new Headers({ authorization: 'Bearer s3cret', 'content-type': 'application/json' }),
      body: '{"a":"ü"}',
    });
    expect(r.status).toBe(201);
    expect(r.ok).toBe(true);
    expect(r.headers.get('x-two')).toBe('a');
    expect(await r.json()).toEqual({ echo: '{"a":"ü"}', auth: 'Bearer s3cret' });
    const last = seen.at(-1)!;
    expect(last.method).toBe('POST');
    expect(last.headers['content-length']).toBe(String(Buffer.byteLength('{"a":"ü"}')));
  });

  it('gives a body-less answer for 204 and decompresses gzip', async () => {
    const empty = await httpFetch(`${base}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    expect(await (await httpFetch(`${base}/gzip`)).text()).toBe('compressed hello');
  });

  it('streams an answer as it arrives (server-sent events)', async () => {
    const r = await httpFetch(`${base}/sse`);
    const reader = r.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe('data: two\n\n');
  });

  it('rejects with the signal reason when aborted before the answer', async () => {
    const ac = new AbortController();
    const pending = httpFetch(`${base}/slow`, { signal: ac.signal });
    setTimeout(() => ac.abort(new DOMException('gave up', 'AbortError')), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', message: 'gave up' });
    await expect(httpFetch(`${base}/json`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('fails like fetch() when nobody listens, and follows a redirect through fetch()', async () => {
    await expect(httpFetch('http://127.0.0.1:1/x')).rejects.toMatchObject({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { code: 'ECONNREFUSED' },
    });
    const moved = await httpFetch(`${base}/moved`, { method: 'POST', body: 'again' });
    expect(moved.status).toBe(201);
    expect(((await moved.json()) as { echo: string }).echo).toBe('again');
  });

  it('resends after a stale kept-alive socket only when the caller allows it', async () => {
    const resending = createHttpFetch({ resendOnStale: (init) => init?.body !== 'a tool call' });
    // the first request leaves a kept-alive socket; the server drops the second unanswered on it
    expect(await (await resending(`${base}/stale`, { method: 'POST', body: 'a' })).text()).toBe('ok a');
    expect(await (await resending(`${base}/stale`, { method: 'POST', body: 'b' })).text()).toBe('ok b');
    const before = seen.length;
    await expect(resending(`${base}/stale`, { method: 'POST', body: 'a tool call' })).rejects.toMatchObject({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { code: 'ECONNRESET' },
    });
    expect(seen.length - before).toBe(1); // sent once, never again
  });

  it('an answer nobody reads gives its socket back: one connection for a whole exchange', async () => {
    const f = createHttpFetch();
    await (await f(`${base}/json`, { method: 'POST', body: 'warm' })).json();
    const before = connections;
    for (let i = 0; i < 5; i++) {
      const refused = await f(`${base}/refused`); // the body is never read, as the MCP SDK does
      expect(refused.status).toBe(405);
    }
    expect(await (await f(`${base}/json`, { method: 'POST', body: 'after' })).json()).toMatchObject({
      echo: 'after',
    });
    expect(connections - before).toBe(0);
    // event streams stay streamed: 'streams an answer as it arrives' above
  });
});
