/**
 * A real engine for tests: HTTP + WebSocket server on an ephemeral port over a real PostgreSQL, and the
 * shared GraphQL client (server/client) talking to it over HTTP like any other caller.
 */
import { randomBytes } from 'node:crypto';
import { startEngine, type Engine } from '../../server/app.js';
import { CreatePrincipal, createClient, type GraphQLClient } from '../../server/client/index.js';
import { loadConfig } from '../../server/config.js';
import { createTestDatabase } from './db.js';

export interface TestEngine extends Engine {
  adminToken: string;
  /** The shared client, without a token; `client.as(token)` for a principal, `client.raw` for hostile bodies. */
  client: GraphQLClient;
  gql<T = any>(
    token: string | null,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<T>>;
  /** like gql but throws when the response carries errors */
  ok<T = any>(token: string | null, query: string, variables?: Record<string, unknown>): Promise<T>;
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
  const gql = async <T>(
    token: string | null,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResult<T>> => (await client.as(token).execute<T>(query, variables)) as GqlResult<T>;
  const ok = async <T>(
    token: string | null,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<T> => {
    const r = await gql<T>(token, query, variables);
    if (r.errors?.length) throw new Error(`GraphQL error: ${JSON.stringify(r.errors)}`);
    return r.data as T;
  };
  const principal: TestEngine['principal'] = async (kind, name, o = {}) => {
    const d = await client.as(adminToken).request(CreatePrincipal, {
      input: { kind, name, groups: o.groups ?? [], topics: o.topics ?? [], projectId: o.projectId ?? null },
    });
    return d.createPrincipal.token;
  };
  return Object.assign(engine, { adminToken, client, gql, ok, principal });
}

/** The code of the first error, for asserting refusals. */
export function codeOf(r: GqlResult<unknown>): string | undefined {
  return r.errors?.[0]?.extensions?.code;
}
