/**
 * The one GraphQL client of Abada's Node code (worker, CLI, demo, bench, soak, tests). Documents are typed
 * from schema.graphql; a plain string serves a test's own selection. Refusals become GraphQLRequestError
 * with the SPEC §9 code, a missing answer an UnreachableError that keeps its cause.
 */
import type http from 'node:http';
import { type GraphQLErrorEntry, GraphQLRequestError, UnreachableError } from './errors.js';
import { type AnyDocument, queryText, type ResultOf, type VariablesOf } from './graphql.js';
import { graphqlEndpoint } from './endpoint.js';
import { HttpTransport, type HttpAnswer, type PostOptions } from './http.js';
import { backoffMs, sleep } from './retry.js';

export * from './documents.js';
export { graphqlEndpoint } from './endpoint.js';
export * from './errors.js';
export { graphql, type ResultOf, type TadaDocumentNode, type VariablesOf } from './graphql.js';
export { backoffMs, sleep } from './retry.js';
export { subscribe, wsClient } from './ws.js';
export { type ResumableOptions, type ResumableSubscription, subscribeResumable } from './resume.js';

/** A bearer token asked for at every request (a worker's OpenID client credentials, renewed as due). */
export type TokenSource = () => Promise<string>;

export interface ClientOptions {
  /** The engine's base URL; `/graphql` is added unless it is already there. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`; none when null or empty. */
  token?: string | TokenSource | null;
  /** Bound on one request unless the call sets its own (default 30 s). */
  timeoutMs?: number;
  /** A keep-alive agent of the caller's (default: one shared by the process). */
  agent?: http.Agent;
  /** Headers computed for each request (the worker's `traceparent`). */
  headers?: () => Record<string, string>;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * Retry on UnreachableError or an UNAVAILABLE answer with backoff until this time (epoch ms). Only for
   * calls that may be repeated unchanged: the engine may have committed a request whose answer was lost.
   */
  retryUntil?: number;
}

export interface GraphQLResult<T> {
  data?: T | null;
  errors?: GraphQLErrorEntry[];
  extensions?: Record<string, unknown>;
}

export class GraphQLClient {
  readonly endpoint: string;
  private readonly transport: HttpTransport;
  private readonly timeoutMs: number;

  constructor(
    private readonly opts: ClientOptions,
    transport?: HttpTransport,
  ) {
    this.endpoint = graphqlEndpoint(opts.url);
    this.transport = transport ?? new HttpTransport(this.endpoint, opts.agent);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** The same engine and connections, another principal. */
  as(token: string | TokenSource | null): GraphQLClient {
    return new GraphQLClient({ ...this.opts, token }, this.transport);
  }

  /** The response body whatever it says: GraphQL errors are returned, not thrown. */
  execute<D extends AnyDocument>(
    doc: D,
    variables: VariablesOf<D>,
    opts?: RequestOptions,
  ): Promise<GraphQLResult<ResultOf<D>>>;
  execute<T = unknown>(
    doc: string,
    variables?: Record<string, unknown>,
    opts?: RequestOptions,
  ): Promise<GraphQLResult<T>>;
  async execute(
    doc: AnyDocument | string,
    variables: Record<string, unknown> = {},
    opts: RequestOptions = {},
  ): Promise<GraphQLResult<unknown>> {
    return (await this.retrying(doc, variables, opts)).body;
  }

  /** The data, or a GraphQLRequestError carrying the first error's code. */
  request<D extends AnyDocument>(
    doc: D,
    variables: VariablesOf<D>,
    opts?: RequestOptions,
  ): Promise<ResultOf<D>>;
  request<T = unknown>(doc: string, variables?: Record<string, unknown>, opts?: RequestOptions): Promise<T>;
  async request(
    doc: AnyDocument | string,
    variables: Record<string, unknown> = {},
    opts: RequestOptions = {},
  ): Promise<unknown> {
    const { body, status } = await this.retrying(doc, variables, opts);
    if (body.errors?.length) throw new GraphQLRequestError(body.errors, status);
    if (status < 200 || status >= 300 || body.data == null)
      throw new UnreachableError(`The engine at ${this.endpoint} answered HTTP ${status} without data.`);
    return body.data;
  }

  /** Any body and headers as they are (hostile tests, proxies); the token unless `headers.authorization`. */
  async raw(body: string, opts: PostOptions = {}): Promise<HttpAnswer & { json(): unknown }> {
    const answer = await this.transport.post(body, {
      timeoutMs: this.timeoutMs,
      ...opts,
      headers: { ...(await this.authHeader()), ...opts.headers },
    });
    return { ...answer, json: () => JSON.parse(answer.text) };
  }

  private async authHeader(): Promise<Record<string, string>> {
    const { token } = this.opts;
    const bearer = typeof token === 'function' ? await token() : token;
    return bearer ? { authorization: `Bearer ${bearer}` } : {};
  }

  private async retrying(
    doc: AnyDocument | string,
    variables: Record<string, unknown>,
    opts: RequestOptions,
  ) {
    for (let i = 0; ; i++) {
      try {
        const answer = await this.once(doc, variables, opts);
        if (answer.body.errors?.[0]?.extensions?.code === 'UNAVAILABLE' && opts.retryUntil !== undefined)
          throw new GraphQLRequestError(answer.body.errors, answer.status);
        return answer;
      } catch (e) {
        const until = opts.retryUntil;
        const again = isRetryable(e) && until !== undefined && Date.now() < until && !opts.signal?.aborted;
        if (!again) {
          // the last UNAVAILABLE answer is what the caller gets, as without retries
          if (e instanceof GraphQLRequestError) return { body: { errors: [...e.errors] }, status: e.status };
          throw e;
        }
        await sleep(Math.min(backoffMs(i, 200, 5000), Math.max(until - Date.now(), 0)), opts.signal);
      }
    }
  }

  private async once(doc: AnyDocument | string, variables: Record<string, unknown>, opts: RequestOptions) {
    const answer = await this.transport.post(JSON.stringify({ query: queryText(doc), variables }), {
      headers: { ...this.opts.headers?.(), ...(await this.authHeader()) },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? this.timeoutMs,
    });
    let body: GraphQLResult<unknown>;
    try {
      body = JSON.parse(answer.text) as GraphQLResult<unknown>;
    } catch (e) {
      throw new UnreachableError(
        `The engine at ${this.endpoint} answered HTTP ${answer.status} without a GraphQL body.`,
        { cause: e },
      );
    }
    if (body === null || typeof body !== 'object')
      throw new UnreachableError(
        `The engine at ${this.endpoint} answered HTTP ${answer.status} without GraphQL.`,
      );
    return { body, status: answer.status };
  }
}

/** No answer, or UNAVAILABLE (the engine's database is away): the request may be sent again unchanged. */
export function isRetryable(e: unknown): boolean {
  return e instanceof UnreachableError || (e instanceof GraphQLRequestError && e.code === 'UNAVAILABLE');
}

/** A client for one engine and one principal. */
export function createClient(opts: ClientOptions): GraphQLClient {
  return new GraphQLClient(opts);
}
