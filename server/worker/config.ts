/**
 * The Agent Worker's configuration, read from the environment once and validated. Every problem is
 * reported together, each naming the variable and what it expects, so an operator fixes them in one go.
 */
import os from 'node:os';
import type { WorkerOidc } from './credentials.js';
import { ELICITATION_POLICIES } from './elicitation.js';

export class WorkerConfigError extends Error {
  override name = 'WorkerConfigError';
  constructor(readonly problems: string[]) {
    super(`The worker configuration is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta/openai/';

export type WorkerConfig = ReturnType<typeof loadWorkerConfig>;

/** Typed readers of the environment's variables; each problem is added to `problems`. */
function readerOf(env: Env, problems: string[]) {
  const str = (name: string): string | null => env[name]?.trim() || null;
  const url = (name: string, required: boolean, def: string | null = null): string | null => {
    const raw = str(name) ?? def;
    if (raw === null) {
      if (required) problems.push(`${name} is required (e.g. http://127.0.0.1:3000).`);
      return null;
    }
    const protocol = URL.canParse(raw) ? new URL(raw).protocol : null;
    if (protocol !== 'http:' && protocol !== 'https:') {
      problems.push(`${name} must be an http(s) URL, got "${raw}".`);
      return null;
    }
    return raw.replace(/\/+$/, '');
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === null) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}".`);
      return def;
    }
    return n;
  };
  const list = (name: string): string[] | null =>
    str(name)
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? null;
  const bool = (name: string, def: boolean): boolean => {
    const raw = str(name)?.toLowerCase();
    if (raw === undefined) return def;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false, got "${raw}".`);
    return def;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], def: T): T => {
    const raw = str(name) ?? def;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}".`);
    return def;
  };

  return { str, url, int, list, bool, oneOf };
}

/** Reads and validates the configuration; throws WorkerConfigError listing every problem. */
export function loadWorkerConfig(env: Env = process.env) {
  const problems: string[] = [];
  const { str, url, int, list, bool, oneOf } = readerOf(env, problems);
  const engineUrl = url('ABADA_URL', true);
  const token = str('ABADA_TOKEN');
  const oidc = oidcOf(str, problems);
  if (!token && !oidc)
    problems.push(
      'ABADA_TOKEN is required: the token of a WORKER principal (createPrincipal), unless the worker ' +
        'signs in with ABADA_OIDC_ISSUER and ABADA_WORKER_OIDC_CLIENT_ID/_SECRET.',
    );
  if (token && oidc)
    problems.push(
      'Set either ABADA_TOKEN or ABADA_WORKER_OIDC_CLIENT_ID/_SECRET (client credentials), not both.',
    );
  const workerId = str('ABADA_WORKER_ID') ?? `${os.hostname()}-${process.pid}`;
  if (workerId.length > 200) problems.push('ABADA_WORKER_ID must be at most 200 characters.');
  const topics = list('ABADA_WORKER_TOPICS') ?? ['abada:agent'];
  if (topics.length === 0) problems.push('ABADA_WORKER_TOPICS must name at least one topic.');
  const logLevel = str('ABADA_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.has(logLevel))
    problems.push(`ABADA_LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}, got "${logLevel}".`);

  const config = {
    /** the engine's base URL; the worker talks to `${engineUrl}/graphql` */
    engineUrl: engineUrl ?? '',
    /** the worker principal's bearer token; empty when `oidc` signs the worker in (SPEC §15.1) */
    token: token ?? '',
    oidc,
    workerId,
    concurrency: int('ABADA_WORKER_CONCURRENCY', 4, 1, 100),
    /** journal calls of several tasks go in one request when ready together (batcher.ts) */
    journalBatch: bool('ABADA_WORKER_JOURNAL_BATCH', true),
    topics,
    /** announced at registration; informative for operators */
    models: list('ABADA_WORKER_MODELS') ?? [],
    /** lease length asked for at fetch and on every extension (extended every lockMs/3) */
    lockMs: int('ABADA_WORKER_LOCK_MS', 60_000, 300, 3_600_000),
    pollMs: int('ABADA_WORKER_POLL_MS', 20_000, 0, 60_000),
    /** on SIGTERM/SIGINT: how long running tasks may take to finish before the worker just stops */
    graceMs: int('ABADA_WORKER_GRACE_MS', 30_000, 0, 3_600_000),
    /** OpenAI-compatible endpoint for every model without a gemini/ or google/ prefix */
    modelBaseUrl: url('ABADA_MODEL_BASE_URL', false),
    modelApiKey: str('ABADA_MODEL_API_KEY'),
    geminiBaseUrl: url('ABADA_GEMINI_BASE_URL', false, DEFAULT_GEMINI_BASE_URL) ?? DEFAULT_GEMINI_BASE_URL,
    geminiApiKey: str('ABADA_GEMINI_API_KEY'),
    modelTimeoutMs: int('ABADA_MODEL_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    toolTimeoutMs: int('ABADA_TOOL_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    /** server names or server/tool refs; null = no restriction */
    allowedTools: list('ABADA_AGENT_ALLOWED_TOOLS'),
    /** how a tool server's request for input is answered (elicitation.ts) */
    elicitation: oneOf('ABADA_MCP_ELICITATION', ELICITATION_POLICIES, 'none'),
    logLevel,
  };
  if (problems.length) throw new WorkerConfigError(problems);
  return config;
}

/** ABADA_WORKER_OIDC_CLIENT_ID/_SECRET with ABADA_OIDC_ISSUER: all three or none (the audience optional). */
function oidcOf(read: (name: string) => string | null, problems: string[]): WorkerOidc | null {
  const issuer = read('ABADA_OIDC_ISSUER');
  const clientId = read('ABADA_WORKER_OIDC_CLIENT_ID');
  const clientSecret = read('ABADA_WORKER_OIDC_CLIENT_SECRET');
  if (!clientId && !clientSecret) return null;
  if (!issuer || !clientId || !clientSecret) {
    problems.push(
      'Client-credentials sign-in needs ABADA_OIDC_ISSUER, ABADA_WORKER_OIDC_CLIENT_ID and ' +
        'ABADA_WORKER_OIDC_CLIENT_SECRET together.',
    );
    return null;
  }
  const u = URL.canParse(issuer) ? new URL(issuer) : null;
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u?.hostname ?? '');
  if (!u || !(u.protocol === 'https:' || (u.protocol === 'http:' && loopback))) {
    problems.push(`ABADA_OIDC_ISSUER must be an https URL (http only on loopback), got "${issuer}".`);
    return null;
  }
  return { issuer, clientId, clientSecret, resource: read('ABADA_OIDC_AUDIENCE') };
}

/** Fills defaults for in-process use (tests, the demo): engineUrl and a token or `oidc` are needed. */
export function workerConfig(
  partial: Partial<WorkerConfig> &
    Pick<WorkerConfig, 'engineUrl'> &
    ({ token: string } | { oidc: WorkerOidc }),
) {
  const base = loadWorkerConfig({ ABADA_URL: partial.engineUrl, ABADA_TOKEN: partial.token || 'unused' });
  return { ...base, token: '', oidc: null, ...partial };
}
