/**
 * Every environment variable Abada reads, read once and validated. A bad value stops the process at
 * start-up with a message that says which variable and what it expects.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { defaultDataDir } from './db/embedded.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type EncryptionKeys = ReturnType<typeof loadEncryption>;

export type Config = ReturnType<typeof loadConfig>;
export type OidcConfig = NonNullable<ReturnType<typeof loadOidc>>;

/** One entry of ABADA_FIRST_PARTY_WORKERS: a global worker signing in as an OpenID client. */
export type FirstPartyWorker = ReturnType<typeof firstPartyWorkers>[number];

type Env = Record<string, string | undefined>;

/** A number: `def` when unset, else one `valid` accepts (`expected` says which). */
function num(env: Env, name: string, def: number, valid: (n: number) => boolean, expected: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!valid(n)) throw new ConfigError(`${name} must be ${expected}, got "${raw}".`);
  return n;
}

const int = (env: Env, name: string, def: number, min = 0) =>
  num(env, name, def, (n) => Number.isInteger(n) && n >= min, `an integer ≥ ${min}`);
const positive = (env: Env, name: string, def: number) =>
  num(env, name, def, (n) => Number.isFinite(n) && n > 0, 'a number > 0');

function list(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseKey(name: string, raw: string): Buffer {
  const buf = Buffer.from(raw.trim(), 'base64');
  if (buf.length !== 32) {
    throw new ConfigError(
      `${name} must be 32 bytes in base64 (generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))").`,
    );
  }
  return buf;
}

/**
 * Keys: ABADA_ENCRYPTION_KEY (current, id ABADA_ENCRYPTION_KEY_ID, default "k1") and
 * ABADA_ENCRYPTION_OLD_KEYS ("id:base64,id:base64") still accepted for reading rows sealed before a
 * rotation. On the embedded database a dev key is generated once and kept under the data directory.
 */
function loadEncryption(env: Env, embedded: boolean, dataDir: string) {
  const keys = new Map<string, Buffer>();
  const currentKeyId = env.ABADA_ENCRYPTION_KEY_ID?.trim() || 'k1';
  let current = env.ABADA_ENCRYPTION_KEY;
  if (!current) {
    if (!embedded) {
      throw new ConfigError(
        'ABADA_ENCRYPTION_KEY is required when DATABASE_URL is set: secrets and step payloads are encrypted with it. Set it to 32 random bytes in base64.',
      );
    }
    const file = path.join(dataDir, 'encryption.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    }
    current = readFileSync(file, 'utf8');
  }
  keys.set(currentKeyId, parseKey('ABADA_ENCRYPTION_KEY', current));
  for (const entry of list(env.ABADA_ENCRYPTION_OLD_KEYS) ?? []) {
    const i = entry.indexOf(':');
    if (i <= 0) throw new ConfigError('ABADA_ENCRYPTION_OLD_KEYS entries must be "keyId:base64key".');
    const id = entry.slice(0, i);
    keys.set(id, parseKey(`ABADA_ENCRYPTION_OLD_KEYS (${id})`, entry.slice(i + 1)));
  }
  return { currentKeyId, keys };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function url(env: Env, name: string, what: string): URL | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const u = URL.canParse(raw) ? new URL(raw) : null;
  if (u && (u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK.has(u.hostname)))) return u;
  throw new ConfigError(
    `${name} must be an https URL (${what}); plain http is accepted only on loopback, got "${raw}".`,
  );
}

function bool<D extends boolean | null>(env: Env, name: string, def: D): boolean | D {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return def;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}".`);
}

/** ABADA_OIDC_*: all three of issuer, client id and secret, or none; OpenID Connect sign-in (SPEC §12). */
function loadOidc(env: Env) {
  const issuer = url(env, 'ABADA_OIDC_ISSUER', 'the OpenID Provider’s issuer');
  const clientId = env.ABADA_OIDC_CLIENT_ID?.trim();
  const clientSecret = env.ABADA_OIDC_CLIENT_SECRET?.trim();
  if (!issuer) {
    if (clientId || clientSecret)
      throw new ConfigError(
        'ABADA_OIDC_CLIENT_ID/SECRET are set but ABADA_OIDC_ISSUER is not; set all three.',
      );
    return null;
  }
  if (!clientId || !clientSecret)
    throw new ConfigError('ABADA_OIDC_ISSUER needs ABADA_OIDC_CLIENT_ID and ABADA_OIDC_CLIENT_SECRET too.');
  return {
    issuer: (env.ABADA_OIDC_ISSUER ?? issuer.href).trim(), // exactly as the provider spells it
    clientId,
    clientSecret,
    scopes: env.ABADA_OIDC_SCOPES?.trim() || 'openid profile email',
    groupsClaim: env.ABADA_OIDC_GROUPS_CLAIM?.trim() || 'groups',
    adminGroup: env.ABADA_OIDC_ADMIN_GROUP?.trim() || null,
    /** minutes between two confirmations of a session's groups by the provider (fractions allowed) */
    refreshMinutes: positive(env, 'ABADA_OIDC_REFRESH_MINUTES', 10),
    /** accept the provider's JWT access tokens for this audience as bearer tokens; null = do not */
    audience: env.ABADA_OIDC_AUDIENCE?.trim() || null,
    /** signature algorithms accepted on those access tokens */
    algorithms: list(env.ABADA_OIDC_ALGORITHMS) ?? ['RS256', 'PS256', 'ES256', 'EdDSA'],
  };
}

/** Whether the dashboard offers pasting a token: as set, else only when people sign in otherwise. */
export const tokenSignInOffered = (config: Config) => config.dashboardTokenSignIn ?? config.oidc === null;

export function loadConfig(env: Env = process.env) {
  const databaseUrl = env.DATABASE_URL?.trim() || null;
  const dataDir = path.resolve(env.ABADA_DATA_DIR?.trim() || defaultDataDir(databaseUrl === null));
  const oidc = loadOidc(env);
  if (env.ABADA_FIRST_PARTY_WORKERS?.trim() && !oidc?.audience)
    throw new ConfigError(
      'ABADA_FIRST_PARTY_WORKERS needs ABADA_OIDC_ISSUER (with its client) and ABADA_OIDC_AUDIENCE: ' +
        'those workers sign in with the provider’s client credentials.',
    );
  return {
    port: int(env, 'PORT', 3000),
    host: env.HOST?.trim() || '127.0.0.1',
    databaseUrl,
    dataDir,
    encryption: loadEncryption(env, databaseUrl === null, dataDir),
    adminToken: env.ABADA_ADMIN_TOKEN?.trim() || null,
    allowedModels: list(env.ABADA_AGENT_ALLOWED_MODELS),
    allowedTools: list(env.ABADA_AGENT_ALLOWED_TOOLS),
    maxLeaseExpiries: int(env, 'ABADA_MAX_LEASE_EXPIRIES', 3, 1),
    /** the longest wait a deferral may ask for (longer ones are cut to it) */
    maxDeferMs: int(env, 'ABADA_MAX_DEFER_MS', 3_600_000, 0),
    /** deferrals on one attempt; the next one counts as a failure of the attempt */
    maxDeferrals: int(env, 'ABADA_MAX_DEFERRALS', 10, 0),
    maxPayloadBytes: int(env, 'ABADA_MAX_PAYLOAD_BYTES', 256 * 1024, 1024),
    maxBodyBytes: int(env, 'ABADA_MAX_BODY_BYTES', 1024 * 1024, 1024),
    workerOfflineAfterMs: int(env, 'ABADA_WORKER_OFFLINE_AFTER_MS', 60_000, 1000),
    heartbeatDebounceMs: int(env, 'ABADA_HEARTBEAT_DEBOUNCE_MS', 5_000, 0),
    /** journal calls of different tasks arriving together share a transaction */
    journalGroupCommit: bool(env, 'ABADA_JOURNAL_GROUP_COMMIT', true),
    slaSweepIntervalMs: int(env, 'ABADA_SLA_SWEEP_INTERVAL_MS', 30_000, 100),
    /** how long approval and incident events stay replayable (older `after:` cursors are refused) */
    eventRetentionHours: int(env, 'ABADA_EVENT_RETENTION_HOURS', 168, 1),
    maxDelegationDepth: int(env, 'ABADA_MAX_DELEGATION_DEPTH', 3, 0),
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    /** bearer token /metrics requires; null = open (bind to a private interface) */
    metricsToken: env.ABADA_METRICS_TOKEN?.trim() || null,
    webhooks: {
      maxAttempts: int(env, 'ABADA_WEBHOOK_MAX_ATTEMPTS', 10, 1),
      timeoutMs: int(env, 'ABADA_WEBHOOK_TIMEOUT_MS', 10_000, 100),
      /** first retry delay; doubles per attempt (with jitter), capped at an hour */
      backoffMs: int(env, 'ABADA_WEBHOOK_BACKOFF_MS', 5_000, 1),
      pollMs: int(env, 'ABADA_WEBHOOK_POLL_MS', 2_000, 10),
    },
    /** where browsers reach this engine; null = http://127.0.0.1:<the port it listens on> */
    publicUrl: url(env, 'ABADA_PUBLIC_URL', 'where browsers reach Abada')?.origin ?? null,
    oidc,
    sessions: {
      idleMinutes: positive(env, 'ABADA_SESSION_IDLE_MINUTES', 60),
      maxHours: positive(env, 'ABADA_SESSION_MAX_HOURS', 12),
    },
    /** whether the dashboard offers pasting a bearer token; null = unset (see `tokenSignInOffered`) */
    dashboardTokenSignIn: bool(env, 'ABADA_DASHBOARD_TOKEN_SIGNIN', null),
    /** global worker principals registered at start (SPEC §15.2) */
    firstPartyWorkers: firstPartyWorkers(env.ABADA_FIRST_PARTY_WORKERS),
  };
}

const WORKER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$/;
const CLIENT_ID_RE = /^[\x21-\x39\x3b-\x7e]{1,200}$/;
const TOPIC_RE = /^[A-Za-z0-9*][A-Za-z0-9:._*-]{0,99}$/;

/**
 * ABADA_FIRST_PARTY_WORKERS: comma-separated `name:clientId[:topics]`; everything after the second
 * colon is the topic list, `;`-separated (default `abada:agent`). Names and client ids once each.
 */
export function firstPartyWorkers(raw: string | undefined) {
  const out: { name: string; clientId: string; topics: string[] }[] = [];
  for (const entry of list(raw) ?? []) {
    const [name, clientId, ...rest] = entry.split(':');
    const topics = rest.length
      ? rest
          .join(':')
          .split(';')
          .map((t) => t.trim())
      : ['abada:agent'];
    const problem =
      clientId === undefined
        ? 'it needs name:clientId[:topic;topic]'
        : !WORKER_NAME_RE.test(name.trim())
          ? 'the name must be 1–100 letters, digits, spaces or ._@-'
          : !CLIENT_ID_RE.test(clientId.trim())
            ? 'the client id must be 1–200 printable characters without a colon'
            : topics.some((t) => !TOPIC_RE.test(t))
              ? 'each topic (separated by ;) must be a name like abada:agent'
              : out.some((w) => w.name === name.trim() || w.clientId === clientId.trim())
                ? 'its name or client id is already listed'
                : null;
    if (problem)
      throw new ConfigError(
        `ABADA_FIRST_PARTY_WORKERS entry "${entry}" is invalid: ${problem} ` +
          '(entries are name:clientId[:topic;topic], separated by commas).',
      );
    out.push({ name: name.trim(), clientId: clientId.trim(), topics });
  }
  return out;
}
