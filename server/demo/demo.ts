/**
 * `npm start` on the embedded database (or `--demo`): the engine plus everything seed 000 needs to be
 * seen working — the CRM MCP server and the scripted model on loopback ports, the CRM tool server and the
 * two processes deployed, the `crm-token` credential, three demo people, an in-process Agent Worker, and
 * Alice's €89 refund waiting for finance. Set-up goes through the public GraphQL API with a bootstrap
 * admin token living only in this process (ABADA_ADMIN_TOKEN, else a random one), as an operator would.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startEngine } from '../app.js';
import {
  CreatePrincipal,
  createClient,
  Deploy,
  type GraphQLClient,
  GraphQLRequestError,
  graphql,
  Me,
  SetCredential,
  StartProcess,
} from '../client/index.js';
import type { Config } from '../config.js';
import { type DemoUser, startDashboard } from '../web/index.js';
import { startCrmServer } from './crm-server.js';
import { DEMO_PASSWORD, oneClick, startDemoIdentity } from './identity.js';
import { ALICE, demoSource } from './definitions.js';
import { startModelServer } from './model-server.js';
import { stablePort } from './http-util.js';
import { demoScript } from './scripts.js';
import { workerConfig } from '../worker/config.js';
import type { WorkerOidc } from '../worker/credentials.js';
import { startWorker } from '../worker/loop.js';

interface StoredPrincipal {
  name: string;
  role: string;
  kind: 'HUMAN' | 'ADMIN' | 'WORKER';
  groups: string[];
  topics: string[];
  token?: string;
}

/** The demo people (and the worker's credential); tokens are kept in `<dataDir>/demo-users.json`. */
const PEOPLE: StoredPrincipal[] = [
  {
    name: 'fiona',
    role: 'finance lead — may approve refunds',
    kind: 'HUMAN',
    groups: ['finance', 'finance-leads'],
    topics: [],
  },
  {
    name: 'sam',
    role: 'support agent — may read, not approve refunds',
    kind: 'HUMAN',
    groups: ['support'],
    topics: [],
  },
  { name: 'ada', role: 'admin — deploys, operates, cannot approve', kind: 'ADMIN', groups: [], topics: [] },
  { name: 'demo-agent-worker', role: 'worker', kind: 'WORKER', groups: [], topics: ['abada:agent'] },
];

export interface DemoOptions {
  config: Config;
  /** Next.js dev mode (hot reload) instead of the production build. */
  dev?: boolean;
  /** Start the in-process Agent Worker (default true). */
  worker?: boolean;
  /** Start Alice's refund when none is active (default true). */
  alice?: boolean;
}

export type Demo = Awaited<ReturnType<typeof startDemo>>;

/** Active instances of a process, to find Alice's refund from an earlier run. */
const ActiveInstances = graphql(`
  query ActiveInstances($key: String!) {
    processInstances(key: $key, state: ACTIVE, first: 50) { edges { node { id businessKey } } }
  }
`);

/**
 * Existing tokens that still authenticate are kept; anything missing or stale is created anew. With the
 * demo's OpenID Provider, a person's principal is the provider-managed one (signed in once here, through
 * the provider), and their token is that principal's, rotated by the admin: one principal per person.
 */
async function ensurePrincipals(
  client: GraphQLClient,
  adminToken: string,
  file: string,
  providerPrincipalId: ((name: string) => Promise<string>) | null,
): Promise<StoredPrincipal[]> {
  let stored: StoredPrincipal[] = [];
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as StoredPrincipal[];
  } catch (e) {
    // none yet, or a file cut short or edited by hand: every token is issued again
    if (!(e instanceof SyntaxError) && (e as { code?: unknown }).code !== 'ENOENT') throw e;
  }
  const out: StoredPrincipal[] = [];
  for (const p of PEOPLE) {
    const managedId = p.kind !== 'WORKER' && providerPrincipalId ? await providerPrincipalId(p.name) : null;
    const old = stored.find((s) => s.name === p.name)?.token;
    if (old) {
      // a token the engine refuses (revoked, from another data directory) is issued again
      const ok = await client
        .as(old)
        .request(Me, {})
        .catch((e: unknown) => {
          if (e instanceof GraphQLRequestError) return null;
          throw e;
        });
      if (ok?.me.name === p.name && (managedId === null || ok.me.id === managedId)) {
        out.push({ ...p, token: old });
        continue;
      }
    }
    if (managedId) {
      const rotated = await setUp(() => client.as(adminToken).request(RotateToken, { id: managedId }));
      out.push({ ...p, token: rotated.rotatePrincipalToken.token });
      continue;
    }
    const created = await setUp(() =>
      client.as(adminToken).request(CreatePrincipal, {
        input: { kind: p.kind, name: p.name, groups: p.groups, topics: p.topics },
      }),
    );
    out.push({ ...p, token: created.createPrincipal.token });
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(out, null, 2), { mode: 0o600 });
  return out;
}

const RotateToken = graphql(`
  mutation DemoRotateToken($id: ID!) { rotatePrincipalToken(id: $id) { token } }
`);

/** A set-up call; a refusal names itself as the demo's set-up (the engine answered, the demo is wrong). */
async function setUp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof GraphQLRequestError)
      throw new Error(`demo set-up: ${e.errors.map((x) => x.message).join('; ')}`, { cause: e });
    throw e;
  }
}

/**
 * The Agent Worker, in-process against the scripted model: signed in with the demo provider's client
 * credentials when the demo runs its own provider, else with the worker principal's token.
 */
function startDemoWorker(
  engineUrl: string,
  signIn: { token: string } | { oidc: WorkerOidc },
  modelUrl: string,
) {
  return startWorker(
    workerConfig({
      engineUrl,
      ...signIn,
      workerId: 'demo-agent-worker',
      topics: ['abada:agent'],
      modelBaseUrl: modelUrl,
      modelApiKey: 'demo',
      pollMs: 5000,
      logLevel: 'warn',
    }),
  );
}

/** Alice's refund: the one already running (a restart), else a new one. */
async function aliceInstance(admin: GraphQLClient): Promise<string> {
  const active = await setUp(() => admin.request(ActiveInstances, { key: 'refund' }));
  const existing = active.processInstances.edges.find((e) => e.node.businessKey === ALICE.businessKey);
  if (existing) return existing.node.id;
  return (await setUp(() => admin.request(StartProcess, ALICE))).startProcess.id;
}

export async function startDemo(opts: DemoOptions) {
  const stateFile = path.join(opts.config.dataDir, 'demo.json');
  const saved: { crmPort?: number; modelPort?: number; oidcPort?: number } = existsSync(stateFile)
    ? JSON.parse(readFileSync(stateFile, 'utf8'))
    : {};
  const crmToken = `crm_${randomBytes(18).toString('base64url')}`;
  const crm = await stablePort(saved.crmPort, (port) => startCrmServer({ port, token: crmToken }));
  const model = await stablePort(saved.modelPort, (port) => startModelServer({ port, script: demoScript }));
  mkdirSync(opts.config.dataDir, { recursive: true });

  const adminToken = opts.config.adminToken ?? `demo-admin-${randomBytes(24).toString('base64url')}`;
  // the demo's own OpenID Provider, unless the operator configured a real one
  const idp = opts.config.oidc ? null : await startDemoIdentity(saved.oidcPort);
  writeFileSync(
    stateFile,
    JSON.stringify({ crmPort: crm.port, modelPort: model.port, oidcPort: idp?.provider.port }),
  );
  const config: Config = {
    ...opts.config,
    adminToken,
    oidc: opts.config.oidc ?? idp?.oidc ?? null,
    firstPartyWorkers: [...opts.config.firstPartyWorkers, ...(idp ? [idp.firstPartyWorker] : [])],
  };
  let users: DemoUser[] = [];
  const dashboard = startDashboard({
    dev: !!opts.dev,
    demoUsers: () => (idp ? users.map(oneClick) : users),
  });
  const engine = await startEngine({ config, web: dashboard.handle }).catch((e) => {
    dashboard.close();
    throw e;
  });
  idp?.register(config.publicUrl ?? engine.url);
  const client = createClient({ url: engine.url });
  const admin = client.as(adminToken);

  await setUp(() => admin.request(Deploy, { source: demoSource(crm.url) }));
  await setUp(() => admin.request(SetCredential, { name: 'crm-token', secret: crmToken }));
  const usersFile = path.join(config.dataDir, 'demo-users.json');
  const principals = await ensurePrincipals(
    client,
    adminToken,
    usersFile,
    idp ? (name) => idp.principalId(engine.url, name) : null,
  );
  users = principals
    .filter((p) => p.kind !== 'WORKER')
    .map((p) => ({ name: p.name, role: p.role, token: p.token ?? '' }));
  const workerToken = principals.find((p) => p.kind === 'WORKER')?.token ?? '';

  const signIn = idp ? { oidc: idp.workerOidc } : { token: workerToken };
  const worker = opts.worker === false ? null : await startDemoWorker(engine.url, signIn, model.url);

  const aliceInstanceId = opts.alice === false ? null : await aliceInstance(admin);

  return {
    engine,
    /** on the engine's port: it may still be building when the demo is up */
    dashboard,
    adminToken,
    users,
    workerToken,
    /** where the demo users' tokens are kept */
    usersFile,
    crmUrl: crm.url,
    modelUrl: model.url,
    /** the demo OpenID Provider's issuer, when the demo runs one */
    identityProvider: idp?.provider.issuer ?? null,
    workerRunning: worker !== null,
    aliceInstanceId,
    async close() {
      dashboard.close();
      await worker?.stop().catch(() => {});
      await engine.close();
      await idp?.provider.close();
      await crm.close();
      await model.close();
    },
  };
}

/** What `npm start` prints after the demo is up. */
export function demoBanner(demo: Demo): string {
  return [
    '',
    `  Abada demo is ready: ${demo.engine.url}`,
    '',
    '  Open it and click "Sign in as fiona" (finance lead) to approve Alice’s €89 refund.',
    ...(demo.dashboard.building()
      ? [
          '  The dashboard is still being built (about half a minute the first time): until then the page says',
          '  so and reloads itself. The agent works on the refund meanwhile.',
        ]
      : []),
    ...(demo.identityProvider
      ? [
          `  People sign in through the demo OpenID Provider at ${demo.identityProvider} (password: ${DEMO_PASSWORD}).`,
        ]
      : []),
    `  Demo users (tokens are also in ${demo.usersFile}):`,
    ...demo.users.map((u) => `    ${u.name.padEnd(6)} ${u.role}`),
    '',
    demo.workerRunning
      ? '  An Agent Worker runs in this process; the refund appears under Approvals within seconds.'
      : '  No Agent Worker is running: start one with `npm run worker` to move the refund forward.',
    `  CRM (MCP) ${demo.crmUrl} · scripted model ${demo.modelUrl}`,
    '',
  ].join('\n');
}
