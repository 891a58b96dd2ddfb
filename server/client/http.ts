/**
 * The transport: one JSON POST over node:http on a keep-alive agent. The bench measured undici's `fetch()`
 * at about three times the CPU per request, on two cores shared with the engines and PostgreSQL.
 */
import http from 'node:http';
import https from 'node:https';
import { UnreachableError } from './errors.js';

/** Shared by every client in the process unless one brings its own (tests that count connections). */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

export interface PostOptions {
  headers?: Record<string, string>;
  /** Aborts the request; the error is an UnreachableError whose cause is the signal's reason. */
  signal?: AbortSignal;
  /** Client-side bound on one request, from sending to the last byte of the answer. */
  timeoutMs?: number;
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Whether the request went over a socket kept alive from an earlier one. */
  reusedSocket: boolean;
}

export class HttpTransport {
  readonly url: URL;
  readonly agent: http.Agent;

  constructor(url: string, agent?: http.Agent) {
    this.url = new URL(url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:')
      throw new Error(`${url}: the engine URL must be http:// or https://`);
    this.agent = agent ?? agents[this.url.protocol];
  }

  /**
   * POSTs `body` and reads the whole answer. A request that met a kept-alive socket the server closed
   * (ECONNRESET / EPIPE before any answer) is sent once more, as Node.js advises: the server almost always
   * dropped the idle socket unread (else the repeat meets what a caller's own retry would: the journal
   * answers a repeated step as reused, a finished task refuses a second end).
   */
  async post(body: string, opts: PostOptions = {}): Promise<HttpAnswer> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.once(body, opts);
      } catch (e) {
        if (!(e instanceof StaleSocket)) throw e;
        // a second kept-alive socket closed under it too: the engine is not answering
        if (tries === 2)
          throw new UnreachableError(`The engine at ${this.url.href} closed the connection twice.`, {
            cause: e,
          });
      }
    }
  }

  private once(body: string, opts: PostOptions): Promise<HttpAnswer> {
    const where = this.url.href;
    return new Promise<HttpAnswer>((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(new UnreachableError(`The request to ${where} was aborted.`, { cause: opts.signal.reason }));
        return;
      }
      const mod = this.url.protocol === 'https:' ? https : http;
      const req = mod.request(this.url, {
        agent: this.agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...opts.headers,
        },
      });
      let answered = false;
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      const fail = (message: string, cause: unknown) => {
        cleanup();
        req.destroy();
        reject(new UnreachableError(message, { cause }));
      };
      const onAbort = () => fail(`The request to ${where} was aborted.`, opts.signal?.reason);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const timer = opts.timeoutMs
        ? setTimeout(
            () => fail(`${where} did not answer within ${opts.timeoutMs} ms.`, new Error('timeout')),
            opts.timeoutMs,
          )
        : undefined;
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (!answered && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
          cleanup();
          reject(new StaleSocket());
          return;
        }
        fail(`The engine at ${where} is unreachable: ${e.code ?? e.message}`, e);
      });
      req.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => fail(`The answer from ${where} broke off: ${e.message}`, e));
        res.on('end', () => {
          cleanup();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            reusedSocket: req.reusedSocket,
          });
        });
      });
      req.end(body);
    });
  }
}

/** A kept-alive socket closed by the server between two requests; the request is sent again. */
class StaleSocket extends Error {
  override name = 'StaleSocket';
}
