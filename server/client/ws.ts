/**
 * graphql-ws for Node callers: the engine's `/graphql` over a WebSocket (the `ws` package), the bearer
 * token in `connectionParams.authorization` (SPEC §9), and a typed `subscribe` for the documents here.
 */
import { type Client, type ClientOptions, createClient, type Sink } from 'graphql-ws';
import WebSocket from 'ws';
import { graphqlEndpoint } from './endpoint.js';
import { type AnyDocument, queryText, type ResultOf, type VariablesOf } from './graphql.js';

/** A graphql-ws client on the engine at `url` (http(s) base URL) as the principal of `token`. */
export function wsClient(
  url: string,
  token: string | null,
  opts: Omit<ClientOptions, 'url' | 'webSocketImpl' | 'connectionParams'> = {},
): Client {
  return createClient({
    url: graphqlEndpoint(url).replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    ...opts,
  });
}

/** Subscribes with a typed document (or a string); returns the function that ends the subscription. */
export function subscribe<D extends AnyDocument>(
  client: Client,
  doc: D,
  variables: VariablesOf<D>,
  sink: Sink<{ data?: ResultOf<D> | null; errors?: readonly unknown[] }>,
): () => void;
export function subscribe<T = unknown>(
  client: Client,
  doc: string,
  variables: Record<string, unknown>,
  sink: Sink<{ data?: T | null; errors?: readonly unknown[] }>,
): () => void;
export function subscribe(
  client: Client,
  doc: AnyDocument | string,
  variables: unknown,
  sink: Sink<{ data?: unknown; errors?: readonly unknown[] }>,
): () => void {
  return client.subscribe({ query: queryText(doc), variables: variables as Record<string, unknown> }, sink);
}
