/**
 * MCP tool servers for one task: a session per server, opened with the credential the engine issued for
 * this lease, and the contract check (bound tools listed, pinned input schemas matching) before the model
 * sees a function. streamable-http: `Authorization: Bearer <secret>`, a write's key both in the
 * `Idempotency-Key` header and `_meta.idempotencyKey`; stdio: the secret in the server process's
 * `credential_env` variable, the key in `_meta` only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import { canonicalJson, sha256Hex } from '../shared/canonical.js';
import { mcpMeta, withTraceHeaders } from '../telemetry/index.js';
import type { ToolSchema } from './conversation.js';
import { type ElicitationNotice, type ElicitationPolicy, enableElicitation } from './elicitation.js';
import { createHttpFetch } from './http-fetch.js';
import { retryAfterMs } from './model.js';
import type { ToolBinding } from './graphql.js';

/** The attempt must stop with `errorType`, never guess (contract mismatch, tool not allowed…). */
export class ToolSetupError extends Error {
  override name = 'ToolSetupError';
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** A call whose outcome is unknown (transport failure, timeout): it may or may not have taken effect. */
export class ToolOutcomeUnknownError extends Error {
  override name = 'ToolOutcomeUnknownError';
}

/**
 * A tool server said "not now" (429, or 503 with Retry-After) before anything ran: at set-up, tools/list
 * or a read. The task is handed back for `retryAfterMs`. Not a write's: that call may have run.
 */
export class ToolServerBusyError extends Error {
  override name = 'ToolServerBusyError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/** The "not now" of a session's last HTTP answer, if it was one (429, or 503 with Retry-After). */
type LastAnswer = { notNow: { status: number; retryAfterMs: number } | null };

function noteAnswer(last: LastAnswer, res: Response): Response {
  last.notNow =
    res.status === 429 || (res.status === 503 && res.headers.has('retry-after'))
      ? { status: res.status, retryAfterMs: retryAfterMs(res.headers) }
      : null;
  return res;
}

/** The failure `e` as ToolServerBusyError when the server's last answer was a "not now". */
function busyOr<E>(last: LastAnswer, server: string, e: E): ToolServerBusyError | E {
  const n = last.notNow;
  return n ? new ToolServerBusyError(`tool server ${server} answered HTTP ${n.status}`, n.retryAfterMs) : e;
}

export type ToolCallResult = { ok: true; response: unknown } | { ok: false; error: string };

export function schemaSha256(inputSchema: unknown): string {
  return sha256Hex(canonicalJson(inputSchema));
}

/** ABADA_AGENT_ALLOWED_TOOLS: a binding is allowed when its server or its exact server/tool is listed. */
export function isAllowed(allowed: string[] | null, b: Pick<ToolBinding, 'server' | 'tool'>): boolean {
  if (allowed === null) return true;
  return allowed.includes(b.server) || allowed.includes(`${b.server}/${b.tool}`);
}

/**
 * A tool call is never sent twice, not even after a stale kept-alive socket: the server may have run it
 * before the socket broke, so the attempt reconciles it instead.
 */
const toolFetch = createHttpFetch({
  resendOnStale: (init) => !(typeof init?.body === 'string' && init.body.includes('"tools/call"')),
});

/** The `_meta.idempotencyKey` of a JSON-RPC `tools/call`, if the body is one that carries a key. */
function keyOf(body: string): string | undefined {
  if (!body.includes('idempotencyKey')) return undefined;
  try {
    const msg = JSON.parse(body) as { method?: string; params?: { _meta?: { idempotencyKey?: unknown } } };
    const key = msg?.method === 'tools/call' ? msg.params?._meta?.idempotencyKey : undefined;
    return typeof key === 'string' ? key : undefined;
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return undefined; // not a single JSON-RPC message: sent as it is
  }
}

/** fetch that copies `_meta.idempotencyKey` of a `tools/call` into the Idempotency-Key header. */
const keyedFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
  init = withTraceHeaders(init);
  const key = typeof init?.body === 'string' ? keyOf(init.body) : undefined;
  if (key === undefined) return toolFetch(url, init);
  const headers = new Headers(init?.headers);
  headers.set('Idempotency-Key', key);
  return toolFetch(url, { ...init, headers });
};

/**
 * Output-schema validators shared by every session: the SDK's default makes an Ajv per client and compiles
 * each schema on every `tools/list`, per task (~3 % of the worker's CPU); a compiled one serves all.
 */
class SharedValidators implements jsonSchemaValidator {
  private readonly ajv = new AjvJsonSchemaValidator();
  private readonly compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const text = canonicalJson(schema);
    let v = this.compiled.get(text);
    if (!v) {
      v = this.ajv.getValidator(schema);
      if (this.compiled.size >= 1000) this.compiled.clear(); // a bound; a server churning schemas recompiles
      this.compiled.set(text, v);
    }
    return v as JsonSchemaValidator<T>;
  }
}

const outputValidators = new SharedValidators();

interface Credential {
  secret: string;
  env: string | null;
}

interface SessionOptions {
  timeoutMs: number;
  elicitation?: ElicitationPolicy;
  onElicitation?: (n: ElicitationNotice) => void;
}

type Session = Awaited<ReturnType<typeof openSession>>;

async function openSession(b: ToolBinding, credential: Credential | null, opts: SessionOptions) {
  const last: LastAnswer = { notNow: null };
  let transport: Transport;
  if (b.transport === 'streamable-http') {
    transport = new StreamableHTTPClientTransport(new URL(b.url), {
      requestInit: credential ? { headers: { Authorization: `Bearer ${credential.secret}` } } : undefined,
      fetch: async (url, init) => noteAnswer(last, await keyedFetch(url, init)),
    });
  } else if (b.transport === 'stdio') {
    if (!b.command) throw new ToolSetupError('TOOL_CONTRACT_MISMATCH', `${b.server}: no command`);
    const env = { ...getDefaultEnvironment() };
    if (credential?.env) env[credential.env] = credential.secret;
    transport = new StdioClientTransport({ command: b.command, args: b.args ?? [], env, stderr: 'ignore' });
  } else {
    throw new ToolSetupError(
      'TOOL_TRANSPORT_UNSUPPORTED',
      `${b.server}: transport "${b.transport}" is not supported by this worker (streamable-http, stdio).`,
    );
  }
  const client = new Client(
    { name: 'abada-agent-worker', version: '1.0.0' },
    { jsonSchemaValidator: outputValidators },
  );
  enableElicitation(client, b.server, opts.elicitation ?? 'none', opts.onElicitation);
  try {
    await client.connect(transport, { timeout: opts.timeoutMs });
  } catch (e) {
    await client.close().catch(() => {});
    throw busyOr(
      last,
      b.server,
      new ToolSetupError('TOOL_SERVER_UNREACHABLE', `${b.server}: ${errorText(e)}`),
    );
  }
  return { client, last };
}

/** The sessions of one task, opened on demand; close them when the task ends or is let go. */
export class ToolSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly opts: SessionOptions & {
      allowedTools: string[] | null;
      credential: (server: string) => Promise<Credential | null>;
    },
  ) {}

  private async session(b: ToolBinding): Promise<Session> {
    let s = this.sessions.get(b.server);
    if (!s) {
      const credential = b.credential ? await this.opts.credential(b.server) : null;
      s = await openSession(b, credential, this.opts);
      this.sessions.set(b.server, s);
    }
    return s;
  }

  /** The contract check (allowed, listed, pinned schema matching); each bound tool's schema by ref. */
  async check(bindings: ToolBinding[]): Promise<Map<string, ToolSchema>> {
    const mcp = bindings.filter((b) => b.transport !== 'delegate');
    const refused = mcp.filter((b) => !isAllowed(this.opts.allowedTools, b));
    if (refused.length) {
      throw new ToolSetupError(
        'TOOL_NOT_ALLOWED',
        `outside ABADA_AGENT_ALLOWED_TOOLS of this worker: ${refused.map((b) => b.ref).join(', ')}`,
      );
    }
    const schemas = new Map<string, ToolSchema>();
    for (const server of new Set(mcp.map((b) => b.server))) {
      const bound = mcp.filter((b) => b.server === server);
      const listed = await this.tools(bound[0]);
      for (const b of bound) {
        const tool = listed.find((t) => t.name === b.tool);
        if (!tool) {
          throw new ToolSetupError(
            'TOOL_CONTRACT_MISMATCH',
            `${b.ref}: the server no longer lists tool "${b.tool}" (it lists ${listed.map((t) => t.name).join(', ') || 'nothing'}).`,
          );
        }
        if (b.inputSchemaSha256 && schemaSha256(tool.inputSchema) !== b.inputSchemaSha256) {
          throw new ToolSetupError(
            'TOOL_CONTRACT_MISMATCH',
            `${b.ref}: the input schema's SHA-256 is ${schemaSha256(tool.inputSchema)}, the definition pins ${b.inputSchemaSha256}.`,
          );
        }
        // Annotations are the server's untrusted hints: they may tighten a binding, never loosen it.
        if (b.policy === 'READ' && tool.annotations?.destructiveHint === true) {
          throw new ToolSetupError(
            'TOOL_CONTRACT_MISMATCH',
            `${b.ref}: the server marks tool "${b.tool}" destructive (destructiveHint: true), but the definition binds it as read, which calls it without a key or an approval. Bind it as write or approval_required and deploy again.`,
          );
        }
        schemas.set(b.ref, { description: tool.description, inputSchema: tool.inputSchema });
      }
    }
    return schemas;
  }

  /** Every tool the binding's server lists (its session opened on demand). Throws ToolSetupError. */
  async tools(b: ToolBinding) {
    const session = await this.session(b);
    try {
      return await listAll(session.client, this.opts.timeoutMs);
    } catch (e) {
      const failed = `${b.server}: tools/list failed: ${errorText(e)}`;
      throw busyOr(session.last, b.server, new ToolSetupError('TOOL_SERVER_UNREACHABLE', failed));
    }
  }

  /** A tool error or protocol refusal is `ok: false`; a transport failure throws ToolOutcomeUnknownError. */
  async call(b: ToolBinding, args: Record<string, unknown>, key: string | null): Promise<ToolCallResult> {
    const session = await this.session(b);
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await session.client.callTool(
        { name: b.tool, arguments: args, ...mcpMeta(key ? { idempotencyKey: key } : {}) },
        undefined,
        { timeout: this.opts.timeoutMs },
      );
    } catch (e) {
      // a read that was not run: hand the task back rather than retry in place or tell the model
      if (b.policy === 'READ' && session.last.notNow) throw busyOr(session.last, b.server, e);
      if (
        e instanceof McpError &&
        e.code !== ErrorCode.RequestTimeout &&
        e.code !== ErrorCode.ConnectionClosed
      )
        return { ok: false, error: `${b.ref}: ${e.message}` };
      if (e instanceof StreamableHTTPError && e.code !== undefined && e.code >= 400 && e.code < 500)
        return { ok: false, error: `${b.ref}: HTTP ${e.code} ${e.message}` };
      throw new ToolOutcomeUnknownError(`${b.ref}: ${errorText(e)}`);
    }
    const content = Array.isArray(result.content) ? result.content : [];
    const text = content
      .filter((c): c is { type: 'text'; text: string } => c?.type === 'text' && typeof c.text === 'string')
      .map((c) => c.text)
      .join('\n');
    if (result.isError) return { ok: false, error: text || 'the tool reported an error' };
    // The tool's answer for the model: its structured content as JSON, else its text content.
    return { ok: true, response: result.structuredContent ?? text };
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.client.close().catch(() => {})));
  }
}

async function listAll(client: Client, timeout: number) {
  const tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

function errorText(e: unknown): string {
  const cause = (e as { cause?: { code?: string } })?.cause?.code;
  const msg = e instanceof Error ? e.message : String(e);
  return cause ? `${msg} (${cause})` : msg;
}
