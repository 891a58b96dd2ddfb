/**
 * One HTTP server, one port: GraphQL over HTTP and graphql-ws at /graphql, /auth/*, /healthz, /readyz,
 * Prometheus /metrics, and the dashboard (`web`) at every other path. Errors a caller can act on keep
 * their code; anything else is masked as INTERNAL.
 */
import http from 'node:http';
import { GraphQLError } from 'graphql';
import { useServer as attachGraphqlWs } from 'graphql-ws/use/ws';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { type EngineContext, ping, readiness } from '../engine/common/index.js';
import { type Auth, createAuth } from '../auth/index.js';
import { EngineError, isUnavailable, unavailable } from '../errors.js';
import type { Logger } from '../log.js';
import type { GraphQLContext } from './builder.js';
import { limitsPlugin } from './limits.js';
import { createLoaders } from './loaders.js';
import { EngineMetrics, serveMetrics } from '../metrics/index.js';
import { observePlugin } from './observe.js';
import type { EventHub } from './pubsub.js';
import { schema } from './schema/index.js';
import { Sessions } from './sessions.js';
import { tracePlugin } from './trace.js';

export type WebHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

function maskError(error: unknown, log: (e: unknown) => void): Error {
  const gql = error instanceof GraphQLError ? error : null;
  const original = gql?.originalError ?? error;
  const answer = (message: string, extensions: Record<string, unknown>) =>
    new GraphQLError(message, { nodes: gql?.nodes, path: gql?.path, extensions });
  if (original instanceof EngineError && original.code !== 'INTERNAL')
    return answer(original.message, { code: original.code, ...original.details });
  if (
    original instanceof GraphQLError &&
    typeof original.extensions?.code === 'string' &&
    original.extensions.code !== 'INTERNAL_SERVER_ERROR'
  )
    return answer(original.message, original.extensions);
  if (gql && !gql.originalError) return gql; // parse, validation and variable errors
  if (isUnavailable(original)) {
    const u = unavailable(original);
    return answer(u.message, { code: u.code });
  }
  // variable coercion wraps the caller's mistake (unknown or mistyped input field) in a second GraphQLError
  if (gql && original instanceof GraphQLError && !original.originalError && !gql.path) return gql;
  log(original);
  return answer('An internal error occurred; it was logged. Try again, or report it.', { code: 'INTERNAL' });
}

export interface ServerOptions {
  engine: EngineContext;
  hub: EventHub;
  web?: WebHandler | null;
  logger: Logger;
}

type Yoga = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

export function createEngineServer(opts: ServerOptions) {
  const { engine, logger } = opts;
  const log = (e: unknown) => logger.error({ err: e }, 'internal error');
  const metrics = new EngineMetrics();
  const auth = createAuth(engine, () => engine.config.publicUrl ?? listeningOrigin(server), log);
  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: { title: 'Abada GraphQL' },
    batching: false,
    // refuseLargeBody already answers 413 before yoga (a POST needs a Content-Length within
    // maxBodyBytes, and Node's parser holds the body to it); yoga's own limit would pipe every body
    // through a TransformStream again (~3 % of the engine's CPU per journal call)
    maxRequestBodySize: false,
    logging: false,
    plugins: [limitsPlugin, observePlugin(metrics, logger), tracePlugin()],
    maskedErrors: { maskError: (e) => maskError(e, log) },
    context: async (initial) => {
      const init = initial as {
        request?: Request;
        req?: http.IncomingMessage;
        socket?: unknown;
        connectionParams?: Record<string, unknown>;
      };
      // graphql-ws operations carry the socket (onSubscribe below); HTTP requests do not
      const { actor, refusal } = init.socket
        ? await auth.identifier.socket(socketHeaders(init.connectionParams, init.req))
        : await auth.identifier.http(
            {
              authorization: init.request?.headers.get('authorization'),
              cookie: init.request?.headers.get('cookie'),
              csrf: init.request?.headers.get('x-abada-csrf'),
            },
            init.request?.method !== 'GET' && init.request?.method !== 'HEAD',
          );
      return {
        actor,
        authRefusal: refusal,
        engine,
        hub: opts.hub,
        loaders: createLoaders(engine),
        signal: init.request?.signal,
      };
    },
  });
  let draining = false;
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const is = (path: string) => url === path || url.startsWith(`${path}?`);
    if (url.startsWith('/auth/') && auth.routes(req, res)) return;
    if (is('/healthz')) serveHealth(engine, res);
    else if (is('/readyz')) serveReady(engine, draining, res);
    else if (is('/metrics')) serveMetrics(metrics, engine, req, res, logger);
    else if (is('/graphql')) {
      if (!refuseLargeBody(engine, req, res)) yoga(req, res);
    } else if (opts.web) {
      Promise.resolve(opts.web(req, res)).catch((e) => {
        log(e);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    } else serveLanding(url, res);
  });
  const wss = new WebSocketServer({ server, path: '/graphql', maxPayload: engine.config.maxBodyBytes });
  const ws = attachWebSocket(wss, yoga, engine, auth);
  return {
    server,
    async close() {
      auth.stop();
      draining = true;
      await ws.dispose();
      wss.close();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The origin browsers use when ABADA_PUBLIC_URL is unset: loopback and the port this server listens on. */
function listeningOrigin(server: http.Server): string {
  const a = server.address();
  return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
}

/** What a graphql-ws connection presents: connectionParams' bearer token, else the upgrade's cookie. */
function socketHeaders(params: Record<string, unknown> | undefined, req: http.IncomingMessage | undefined) {
  const authorization = params?.authorization;
  return {
    authorization: typeof authorization === 'string' ? authorization : null,
    cookie: req?.headers.cookie ?? null,
    origin: req?.headers.origin ?? null,
  };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, close = false) {
  res.writeHead(status, { 'content-type': 'application/json', ...(close ? { connection: 'close' } : {}) });
  res.end(JSON.stringify(body));
}

function serveHealth(engine: EngineContext, res: http.ServerResponse) {
  ping(engine.db)
    .then(() => sendJson(res, 200, { status: 'ok' }))
    .catch(() => sendJson(res, 503, { status: 'unavailable', reason: 'database unreachable' }));
}

/** /readyz, for load balancers: 200 only while the database answers, events flow and we are not closing. */
function serveReady(engine: EngineContext, draining: boolean, res: http.ServerResponse) {
  readiness(engine, draining).then((r) =>
    sendJson(res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not ready', ...r }),
  );
}

/** A POST over the body limit (or without a Content-Length) is answered 413 here; true when refused. */
function refuseLargeBody(engine: EngineContext, req: http.IncomingMessage, res: http.ServerResponse) {
  const len = Number(req.headers['content-length'] ?? 0);
  const tooLarge =
    req.method === 'POST' &&
    (len > engine.config.maxBodyBytes ||
      (!req.headers['content-length'] && req.headers['transfer-encoding']));
  if (!tooLarge) return false;
  const message = `Request bodies are limited to ${engine.config.maxBodyBytes} bytes (and need a Content-Length).`;
  sendJson(res, 413, { errors: [{ message, extensions: { code: 'PAYLOAD_TOO_LARGE' } }] }, true);
  req.resume();
  return true;
}

function serveLanding(url: string, res: http.ServerResponse) {
  res.writeHead(url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
  res.end(
    url === '/'
      ? '<!doctype html><title>Abada</title><h1>Abada</h1><p>The API is at <a href="/graphql">/graphql</a>.</p>'
      : 'Not found',
  );
}

/** graphql-ws at /graphql: a connection authenticates once; each subscription runs through yoga's envelope. */
function attachWebSocket(wss: WebSocketServer, yoga: Yoga, engine: EngineContext, auth: Auth) {
  const sessions = new Sessions(engine.notifier);
  return attachGraphqlWs(
    {
      // biome-ignore lint/suspicious/noExplicitAny: yoga's enveloped execute/subscribe travel in rootValue
      execute: (args: any) => args.rootValue.execute(args),
      // biome-ignore lint/suspicious/noExplicitAny: as above
      subscribe: (args: any) => args.rootValue.subscribe(args),
      onConnect: async (ctx) => {
        const { actor } = await auth.identifier.socket(
          socketHeaders(ctx.connectionParams, ctx.extra.request),
        );
        if (actor === null) return false;
        // kept per connection so a disabled (or rotated, or changed) principal's sockets can be closed
        sessions.add(actor.principalId, ctx.extra.socket);
        return true;
      },
      onSubscribe: async (ctx, _id, params) => {
        const env = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, socket: ctx.extra.socket, params });
        const args = {
          schema: env.schema,
          operationName: params.operationName,
          document: env.parse(params.query),
          variableValues: params.variables,
          contextValue: await env.contextFactory(),
          rootValue: { execute: env.execute, subscribe: env.subscribe },
        };
        const errors = env.validate(args.schema, args.document);
        return errors.length ? errors : (args as never);
      },
    },
    wss,
  );
}
