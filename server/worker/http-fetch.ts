/**
 * The `fetch` of the worker's model and tool clients over node:http on keep-alive agents: undici's
 * `fetch()` took a quarter of the worker's CPU (~0.28 ms a request against ~0.08 ms, about nine a task).
 * Event streams read as they arrive, other answers are read whole first (readAtOnce). Other bodies,
 * `Request` inputs, non-http URLs and redirects are left to `fetch()`.
 *
 * A request that met a kept-alive socket the server closed (ECONNRESET / EPIPE before any answer) is sent
 * once more when `resendOnStale(init)` allows, as Node.js advises; otherwise it fails as `fetch()` does,
 * a TypeError caused by the socket's error.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Statuses whose answer has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** `resendOnStale`: may a request that met a stale kept-alive socket be sent once more (default: yes). */
export function createHttpFetch(
  opts: { resendOnStale?: (init: RequestInit | undefined) => boolean } = {},
): Fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : null;
    const body = init?.body;
    if (
      !url ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))
    )
      return fetch(input, init);
    let answer: Response;
    try {
      answer = await once(url, init);
    } catch (e) {
      if (init?.signal?.aborted && e === init.signal.reason) throw e;
      if (!(e instanceof StaleSocket) || !(opts.resendOnStale?.(init) ?? true))
        throw new TypeError('fetch failed', { cause: e instanceof StaleSocket ? e.cause : e });
      answer = await once(url, init);
    }
    if (REDIRECT.has(answer.status) && answer.headers.has('location') && init?.redirect !== 'manual') {
      await answer.body?.cancel();
      return fetch(input, init);
    }
    return answer;
  };
}

export const httpFetch: Fetch = createHttpFetch();

function once(url: URL, init: RequestInit | undefined): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const headers: Record<string, string> = {};
    if (init?.headers) for (const [k, v] of new Headers(init.headers)) headers[k] = v;
    const body = init?.body as string | Uint8Array | null | undefined;
    if (body != null && headers['content-length'] === undefined)
      headers['content-length'] = String(
        typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
      );
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      agent: agents[url.protocol as 'http:' | 'https:'],
      method: init?.method ?? 'GET',
      headers,
    });
    let answer: http.IncomingMessage | undefined;
    // before the headers the request fails with the signal's reason; after, the body's stream does
    const onAbort = () => {
      if (answer) answer.destroy(asError(signal?.reason));
      else {
        req.destroy();
        reject(signal?.reason);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (answer) return; // the body's stream carries it
      signal?.removeEventListener('abort', onAbort);
      if (req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE'))
        reject(new StaleSocket('stale kept-alive socket', { cause: e }));
      else reject(e);
    });
    req.on('response', (res) => {
      answer = res;
      const status = res.statusCode ?? 0;
      const responseHeaders = new Headers();
      for (let i = 0; i < res.rawHeaders.length; i += 2)
        responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      res.once('close', () => signal?.removeEventListener('abort', onAbort));
      const answerInit = { status, statusText: res.statusMessage, headers: responseHeaders };
      if (NULL_BODY.has(status) || init?.method === 'HEAD') {
        res.resume();
        resolve(new Response(null, answerInit));
        return;
      }
      const stream = decoded(res);
      if (readAtOnce(res)) readWhole(stream, signal, answerInit).then(resolve, reject);
      else resolve(new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, answerInit));
    });
    req.end(init?.body as string | Uint8Array | undefined);
  });
}

/*
 * An answer that is not an event stream nor announced over 1 MiB is read whole before fetch resolves, so
 * its socket returns to the pool even unread: the MCP SDK never reads a notification's 202 body nor the
 * 405 refusing its GET stream, and each held its socket until the session closed (two connections a task).
 */
const READ_AT_ONCE_BYTES = 1 << 20;

function readAtOnce(res: http.IncomingMessage): boolean {
  const type = String(res.headers['content-type'] ?? '').toLowerCase();
  const length = Number(res.headers['content-length'] ?? 0);
  return !type.startsWith('text/event-stream') && length <= READ_AT_ONCE_BYTES;
}

function readWhole(stream: Readable, signal: AbortSignal | undefined, init: ResponseInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => {
      ended = true;
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      resolve(new Response(body as Uint8Array<ArrayBuffer>, init));
    });
    const fail = (e?: Error) => {
      if (!ended) reject(signal?.aborted ? signal.reason : (e ?? new Error('the answer ended early')));
    };
    stream.once('error', fail);
    stream.once('close', () => fail());
  });
}

const INFLATE = new Map<string, () => Transform>([
  ['gzip', zlib.createGunzip],
  ['x-gzip', zlib.createGunzip],
  ['deflate', zlib.createInflate],
  ['br', zlib.createBrotliDecompress],
]);

/** The body as fetch() gives it: decompressed when the server compressed it. */
function decoded(res: http.IncomingMessage): Readable {
  const inflate = INFLATE.get(String(res.headers['content-encoding'] ?? '').toLowerCase())?.();
  if (!inflate) return res;
  res.on('error', (e) => inflate.destroy(e));
  return res.pipe(inflate);
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}

class StaleSocket extends Error {}
