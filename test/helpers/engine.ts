/**
 * A real engine for tests: HTTP + WebSocket server on an ephemeral port over a real PostgreSQL, and the
 * shared GraphQL client (server/client) talking to it over HTTP like any other caller.
 */
import { randomBytes } from 'node:crypto';
import { startEngine, type Engine } from '../../server/app.js';
import {
  CreatePrincipal,
  createClient,
  type GraphQLClient,
  type ResultOf,
  type TadaDocumentNode,
} from '../../server/client/index.js';
import { loadConfig } from '../../server/config.js';
import { createTestDatabase } from './db.js';
import type { Untyped } from './untyped.js';

// biome-ignore lint/suspicious/noExplicitAny: the variables of any typed document, as the client's own
type AnyDocument = TadaDocumentNode<any, any>;

/**
 * A document's variables, unchecked: tests send what the schema refuses on purpose (a missing field, a
 * wrong type) and read the refusal; the answer is what the types are for.
 */
type Variables = Record<string, unknown>;

export interface TestEngine extends Engine {
  adminToken: string;
  /** The shared client, without a token; `client.as(token)` for a principal, `client.raw` for hostile bodies. */
  client: GraphQLClient;
  /** A typed document's answer, errors included. */
  gql<D extends AnyDocument>(
    token: string | null,
    doc: D,
    variables?: Variables,
  ): Promise<GqlResult<ResultOf<D>>>;
  /** A selection of the test's own: its answer is untyped (see Untyped). */
  gql<T = Untyped>(
    token: string | null,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<T>>;
  /** like gql but throws when the response carries errors */
  ok<D extends AnyDocument>(token: string | null, doc: D, variables?: Variables): Promise<ResultOf<D>>;
  ok<T = Untyped>(token: string | null, query: string, variables?: Record<string, unknown>): Promise<T>;
  principal(
    kind: 'WORKER' | 'HUMAN' | 'ADMIN',
    name: string,
    opts?: { groups?: string[]; topics?: string[]; projectId?: string },
  ): Promise<string>;
}

export interface GqlResult<T> {
  data: T | null;
  errors?: { message: string; extensions?: { code?: string; [k: string]: unknown }; path?: string[] }[];
}

export const TEST_KEY = randomBytes(32).toString('base64');

export async function startTestEngine(
  opts: { databaseUrl?: string; env?: Record<string, string> } = {},
): Promise<TestEngine> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const adminToken = `admin-${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    ABADA_ENCRYPTION_KEY: TEST_KEY,
    ABADA_ADMIN_TOKEN: adminToken,
    PORT: '0',
    ABADA_HEARTBEAT_DEBOUNCE_MS: '0',
    ...opts.env,
  });
  const engine = await startEngine({ config, databaseUrl, log: () => {}, sweeps: false });
  const client = createClient({ url: engine.url });
  const gql = async (
    token: string | null,
    query: string | AnyDocument,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<unknown>> =>
    // the client prints a document itself; its overloads only tell typed callers from untyped ones
    (await client.as(token).execute(query as string, variables)) as GqlResult<unknown>;
  const ok = async (
    token: string | null,
    query: string | AnyDocument,
    variables?: Record<string, unknown>,
  ): Promise<unknown> => {
    const r = await gql(token, query, variables);
    if (r.errors?.length) throw new Error(`GraphQL error: ${JSON.stringify(r.errors)}`);
    return r.data;
  };
  const principal: TestEngine['principal'] = async (kind, name, o = {}) => {
    const d = await client.as(adminToken).request(CreatePrincipal, {
      input: { kind, name, groups: o.groups ?? [], topics: o.topics ?? [], projectId: o.projectId ?? null },
    });
    return d.createPrincipal.token;
  };
  return Object.assign(engine, { adminToken, client, gql, ok, principal } as Pick<
    TestEngine,
    'adminToken' | 'client' | 'gql' | 'ok' | 'principal'
  >);
}

/** The code of the first error, for asserting refusals. */
export function codeOf(r: GqlResult<unknown>): string | undefined {
  return r.errors?.[0]?.extensions?.code;
}
