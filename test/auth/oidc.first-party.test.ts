/**
 * First-party workers registered at start (SPEC §15.2): two engines starting at once on one database
 * register each ABADA_FIRST_PARTY_WORKERS entry once (one principal, one CREATED record); a restart with
 * other topics updates them; the worker signs in with its client credentials; a bad entry and a client
 * id held by another principal stop the start with what to fix.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngine } from '../../server/app.js';
import { ConfigError, firstPartyWorkers, loadConfig } from '../../server/config.js';
import { type DemoProvider, demoAccounts, startDemoProvider } from '../../server/demo/oidc-provider.js';
import { createTestDatabase } from '../helpers/db.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { AUDIENCE, clientCredentialsToken, PASSWORD } from '../helpers/oidc.js';

let provider: DemoProvider;
let databaseUrl: string;
const engines: TestEngine[] = [];

const env = (workers: string) => ({
  ABADA_OIDC_ISSUER: provider.issuer,
  ABADA_OIDC_CLIENT_ID: 'abada',
  ABADA_OIDC_CLIENT_SECRET: 'abada-secret',
  ABADA_OIDC_AUDIENCE: AUDIENCE,
  ABADA_FIRST_PARTY_WORKERS: workers,
});

const start = async (workers: string) => {
  const e = await startTestEngine({ databaseUrl, env: env(workers) });
  engines.push(e);
  return e;
};

beforeAll(async () => {
  provider = await startDemoProvider({ accounts: demoAccounts(PASSWORD) });
  provider.configure(
    {
      clientId: 'abada',
      clientSecret: 'abada-secret',
      redirectUris: ['http://127.0.0.1/cb'],
      postLogoutRedirectUris: [],
    },
    { apiAudience: AUDIENCE, workers: [{ clientId: 'agent-client', clientSecret: 'agent-secret' }] },
  );
  databaseUrl = await createTestDatabase();
});
afterAll(async () => {
  await Promise.allSettled(engines.map((e) => e.close()));
  await provider?.close();
});

async function rows(e: TestEngine) {
  const r = await e.context.db.execute(
    sql`SELECT p.name, p.topics, p.project_id, p.kind,
       (SELECT count(*)::int FROM principal_events ev WHERE ev.principal_id = p.id AND ev.action = 'CREATED') AS created,
       (SELECT count(*)::int FROM principal_events ev WHERE ev.principal_id = p.id AND ev.action = 'UPDATED') AS updated
     FROM principals p WHERE p.oidc_client_id IS NOT NULL ORDER BY p.name`,
  );
  return r.rows;
}

describe('ABADA_FIRST_PARTY_WORKERS', () => {
  it('registers each worker once when two engines start at once', async () => {
    const workers = 'agent:agent-client, mailer:mail-client:notify;mail:out';
    const [a] = await Promise.all([start(workers), start(workers)]);
    expect(await rows(a)).toEqual([
      { name: 'agent', topics: ['abada:agent'], project_id: null, kind: 'WORKER', created: 1, updated: 0 },
      {
        name: 'mailer',
        topics: ['notify', 'mail:out'],
        project_id: null,
        kind: 'WORKER',
        created: 1,
        updated: 0,
      },
    ]);
    // the worker signs in with its client credentials, as the global worker
    const token = await clientCredentialsToken(provider, 'agent-client', 'agent-secret');
    const me = (await a.ok(token, '{ me { name kind projectId topics } }')) as { me: unknown };
    expect(me.me).toEqual({ name: 'agent', kind: 'WORKER', projectId: null, topics: ['abada:agent'] });
  });

  it('updates the topics at the next start and changes nothing when they are the same', async () => {
    const e = await start('agent:agent-client:abada:agent;triage, mailer:mail-client:notify;mail:out');
    const after = await rows(e);
    expect(after.map((r) => [r.name, r.topics, r.created, r.updated])).toEqual([
      ['agent', ['abada:agent', 'triage'], 1, 1],
      ['mailer', ['notify', 'mail:out'], 1, 0],
    ]);
  });

  it('refuses a client id another principal holds, saying what to fix', async () => {
    const e = engines[0];
    await e.ok(
      e.adminToken,
      'mutation($input: CreatePrincipalInput!) { createPrincipal(input: $input) { token } }',
      {
        input: { kind: 'WORKER', name: 'project-worker', topics: ['t'], oidcClientId: 'taken-client' },
      },
    );
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      ABADA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: '0',
      ...env('first:taken-client'),
    });
    const started = startEngine({ config, databaseUrl, log: () => {}, sweeps: false });
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(
      /"taken-client" already signs in as the worker principal "project-worker" of project default/,
    );
  });

  it('refuses bad entries at start-up with what to fix', () => {
    expect(firstPartyWorkers('a:b:x;y, c:d')).toEqual([
      { name: 'a', clientId: 'b', topics: ['x', 'y'] },
      { name: 'c', clientId: 'd', topics: ['abada:agent'] },
    ]);
    for (const bad of ['lonely', 'a:', ':b', 'a:b:bad topic', 'a:b,a:c', 'a:b,c:b'])
      expect(() => firstPartyWorkers(bad), bad).toThrow(/ABADA_FIRST_PARTY_WORKERS entry .* is invalid/);
    expect(() =>
      loadConfig({
        ABADA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        ABADA_FIRST_PARTY_WORKERS: 'a:b',
      }),
    ).toThrow(/needs ABADA_OIDC_ISSUER/);
  });
});
