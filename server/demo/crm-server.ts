/**
 * Demo CRM: a real MCP server over streamable HTTP (stateless: a fresh McpServer + transport per HTTP
 * request, built from the current configuration so renames and schema changes show at once).
 *
 *   POST /mcp       MCP (Bearer token required when `token` is set; 401 otherwise)
 *   GET  /state     { sideEffects, calls, counts, tickets }          (no auth: a test double's back door)
 *   POST /control   { action: 'reset' | 'delay' | 'rename' | 'alterSchema' | 'fail' | 'addCustomer'
 *                   | 'refundByHand' | 'dropAnswer' | 'dropRequest', ... }
 *
 * CLI: `node --import tsx server/demo/crm-server.ts --port 4100 [--token secret] [--latency-ms 50]`
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../shared/canonical.js';
import { startTracing, traceMcpRequest } from '../telemetry/index.js';
import { type CrmControls, handleControl } from './crm-control.js';
import { cliArg, closeServer, isMainModule, listen, readJson, sendJson } from './http-util.js';
import { type CrmCall, type CrmRefund, type CrmSideEffect, CrmState } from './crm-state.js';

export type { CrmCall, CrmCustomer, CrmRefund, CrmSideEffect } from './crm-state.js';

export interface CrmServerOptions {
  port?: number;
  host?: string;
  /** When set, `/mcp` requires `Authorization: Bearer <token>`. */
  token?: string | null;
  /** Every tool call's answer is held this long (a real system's latency; the bench uses 50 ms). Default 0. */
  latencyMs?: number;
  /** A refund beyond what is left of the order: `refuse` (default, as a payment system does) or `allow`. */
  overRefunds?: 'refuse' | 'allow';
}

export interface CrmServer extends CrmControls {
  /** The MCP endpoint, e.g. `http://127.0.0.1:4100/mcp`. */
  url: string;
  /** `http://127.0.0.1:4100` (for `/state` and `/control`). */
  baseUrl: string;
  port: number;
  token: string | null;
  readonly state: CrmState;
  readonly sideEffects: CrmSideEffect[];
  readonly calls: CrmCall[];
  countSideEffects(tool?: string): number;
  countCalls(tool?: string): number;
  counts(): { calls: Record<string, number>; sideEffects: Record<string, number> };
  /** Refunds made (by the tool or by hand). */
  readonly refunds: CrmRefund[];
  close(): Promise<void>;
}

/** SHA-256 hex over canonical JSON of a tool's `inputSchema` as `tools/list` returns it. */
export function inputSchemaSha256(tool: { inputSchema: unknown }): string {
  return sha256Hex(canonicalJson(tool.inputSchema));
}

const TOOL_DEFS: Record<string, { description: string; shape: z.ZodRawShape }> = {
  get_customer: {
    description: 'Look a customer up by id: profile, tier and orders.',
    shape: { customerId: z.string().min(1).describe('Customer id, e.g. C-42') },
  },
  get_order: {
    description: 'Look an order up by id: status, amount, currency and how much was refunded.',
    shape: { orderId: z.string().min(1).describe('Order id, e.g. 5531') },
  },
  find_refund: {
    description: 'The refunds of an order; with key, only the one sent with that idempotency key.',
    shape: { orderId: z.string().min(1), key: z.string().optional() },
  },
  create_ticket: {
    description: 'Open a support ticket. Honours an idempotency key.',
    shape: {
      customerId: z.string().min(1),
      subject: z.string().min(1),
      priority: z.enum(['low', 'normal', 'high']),
    },
  },
  refund: {
    description: 'Refund an order. Honours an idempotency key.',
    shape: {
      orderId: z.string().min(1),
      amount: z.number().positive(),
      currency: z.string().length(3),
    },
  },
  close_ticket: {
    description: 'Close a ticket. Honours an idempotency key.',
    shape: { ticketId: z.string().min(1) },
  },
  send_email: {
    description: 'Send an e-mail to a customer. Ignores idempotency keys.',
    shape: { to: z.string().min(1), subject: z.string(), body: z.string() },
  },
};

/** A tool's error answer. */
const toolError = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });

function headerValue(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

/** What the handlers of one CRM server share: its state and its held answers. */
interface Runtime {
  state: CrmState;
  timers: Set<{ timer: NodeJS.Timeout; done: () => void }>;
  latencyMs: number;
  /** holds an answer; `close()` ends every hold at once */
  sleep(ms: number): Promise<void>;
}

function runtime(latencyMs: number, overRefunds: 'refuse' | 'allow'): Runtime {
  const timers = new Set<{ timer: NodeJS.Timeout; done: () => void }>();
  const sleep = (ms: number) =>
    new Promise<void>((done) => {
      const entry = { timer: setTimeout(() => finish(), ms), done: () => finish() };
      const finish = () => {
        clearTimeout(entry.timer);
        timers.delete(entry);
        done();
      };
      timers.add(entry);
    });
  return { state: new CrmState(overRefunds), timers, latencyMs, sleep };
}

/**
 * One JSON Schema validator for every McpServer of the process: the SDK builds a new Ajv per server
 * otherwise (a third of the double's CPU per request), and the schemas it validates do not change.
 */
const sharedValidator = new AjvJsonSchemaValidator();

/** One McpServer per HTTP request, from the current configuration. */
function buildMcpServer(
  rt: Runtime,
  callsById: Map<string | number, CrmCall>,
  res: ServerResponse,
): McpServer {
  const { state, sleep } = rt;
  const server = new McpServer(
    { name: 'demo-crm', version: '1.0.0' },
    { jsonSchemaValidator: sharedValidator },
  );
  for (const [tool, def] of Object.entries(TOOL_DEFS)) {
    const shape = state.alteredSchemas.has(tool)
      ? { ...def.shape, note: z.string().optional().describe('Free text note') }
      : def.shape;
    server.registerTool(
      state.publicName(tool),
      { description: def.description, inputSchema: shape },
      async (args: Record<string, unknown>, extra) => {
        const call = callsById.get(extra.requestId);
        const headerKey = headerValue(extra.requestInfo?.headers['idempotency-key']);
        const meta = extra._meta as Record<string, unknown> | undefined;
        const metaKey = typeof meta?.idempotencyKey === 'string' ? meta.idempotencyKey : null;
        const record = call ?? state.recordCall(tool, args, headerKey, metaKey);
        record.tool = tool;
        record.args = args;
        // A lost request: the connection drops before the call runs — no effect, no answer.
        if (state.takeLostRequest(tool)) {
          record.status = 'error';
          record.error = 'request lost';
          res.socket?.destroy();
          return toolError('connection dropped');
        }
        const outcome = state.execute(tool, args, headerKey ?? metaKey);
        if (outcome.ok) {
          record.status = outcome.replayed ? 'replayed' : 'ok';
          record.result = outcome.result;
        } else {
          record.status = 'error';
          record.error = outcome.message;
        }
        // The call is recorded and its side effect done before the delay: a client killed while the
        // answer is held leaves the effect behind (a "crash right after sending" for the worker).
        // A lost answer: the effect is done, then the connection drops before anything is sent back.
        if (state.takeDrop(tool)) {
          res.socket?.destroy();
          return toolError('connection dropped');
        }
        const ms = state.takeDelay(tool) + rt.latencyMs;
        if (ms > 0) await sleep(ms);
        record.answeredMs = performance.timeOrigin + performance.now();
        if (!outcome.ok) return toolError(outcome.message);
        return {
          content: [{ type: 'text' as const, text: JSON.stringify(outcome.result) }],
          structuredContent: outcome.result as Record<string, unknown>,
        };
      },
    );
  }
  return server;
}

async function handleMcp(rt: Runtime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { state } = rt;
  if (req.method !== 'POST') {
    // Stateless: no standalone SSE stream (GET) and no session to delete (DELETE).
    sendJson(res, 405, {
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed.' },
      id: null,
    });
    return;
  }
  const body = await readJson(req, res, {
    jsonrpc: '2.0',
    error: { code: -32700, message: 'Parse error' },
    id: null,
  });
  if (body === undefined) return;
  // Record every tools/call, including those the server then refuses (unknown tool, bad arguments).
  const callsById = new Map<string | number, CrmCall>();
  const headerKey = headerValue(req.headers['idempotency-key']);
  for (const msg of Array.isArray(body) ? body : [body]) {
    if (msg && typeof msg === 'object' && msg.method === 'tools/call' && msg.id !== undefined) {
      const params = (msg.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: unknown };
      const meta = (params._meta ?? {}) as Record<string, unknown>;
      const metaKey = typeof meta.idempotencyKey === 'string' ? meta.idempotencyKey : null;
      const args = (params.arguments ?? {}) as Record<string, unknown>;
      callsById.set(msg.id, state.recordCall(String(params.name), args, headerKey, metaKey));
    }
  }
  const server = buildMcpServer(rt, callsById, res);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    for (const call of callsById.values()) {
      if (call.status === 'pending') {
        call.status = 'error';
        call.error = call.error ?? 'refused by the MCP server (unknown tool or invalid arguments)';
      }
    }
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await traceMcpRequest('demo-crm', req.headers, body, () => transport.handleRequest(req, res, body));
}

function route(rt: Runtime, api: () => CrmServer, token: string | null) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const run = async () => {
      if (path === '/mcp') {
        if (token !== null && req.headers.authorization !== `Bearer ${token}`) {
          res.setHeader('WWW-Authenticate', 'Bearer realm="demo-crm"');
          sendJson(res, 401, { error: 'unauthorized', message: 'A valid Bearer token is required' });
          return;
        }
        await handleMcp(rt, req, res);
      } else if (path === '/state' && req.method === 'GET') {
        sendJson(res, 200, rt.state.snapshot());
      } else if (path === '/control' && req.method === 'POST') {
        await handleControl(api(), req, res);
      } else if (path === '/healthz') {
        sendJson(res, 200, { ok: true });
      } else {
        sendJson(res, 404, { error: 'not found' });
      }
    };
    run().catch((err: unknown) => {
      if (!res.headersSent) {
        sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: String(err) }, id: null });
      } else res.end();
    });
  };
}

function crmApi(
  rt: Runtime,
  http: Server,
  at: { baseUrl: string; port: number; token: string | null },
): CrmServer {
  const { state, timers } = rt;
  return {
    url: `${at.baseUrl}/mcp`,
    baseUrl: at.baseUrl,
    port: at.port,
    token: at.token,
    state,
    get sideEffects() {
      return state.sideEffects;
    },
    get calls() {
      return state.calls;
    },
    countSideEffects: (tool) => state.countSideEffects(tool),
    countCalls: (tool) => state.countCalls(tool),
    counts: () => state.counts(),
    reset: () => state.reset(),
    setDelay(tool, ms, times) {
      if (ms <= 0) state.delays.delete(tool);
      else state.delays.set(tool, { ms, remaining: times });
    },
    renameTool(from, to) {
      if (from === to) state.renames.delete(from);
      else state.renames.set(from, to);
    },
    alterSchema(tool, altered = true) {
      if (altered) state.alteredSchemas.add(tool);
      else state.alteredSchemas.delete(tool);
    },
    failNext(tool, message = `${tool} failed: CRM temporarily unavailable`, times = 1) {
      state.failures.set(tool, { message, remaining: times });
    },
    addCustomer: (customer) => state.addCustomer(customer),
    get refunds() {
      return state.refunds;
    },
    refundByHand: (orderId) => void state.refundByHand(orderId),
    dropAnswer(tool, times = 1) {
      state.drops.set(tool, times);
    },
    dropRequest(tool, times = 1) {
      state.lostRequests.set(tool, times);
    },
    async close() {
      for (const t of [...timers]) t.done();
      await closeServer(http);
    },
  };
}

export async function startCrmServer(opts: CrmServerOptions = {}): Promise<CrmServer> {
  const rt = runtime(opts.latencyMs ?? 0, opts.overRefunds ?? 'refuse');
  const token = opts.token ?? null;
  let api: CrmServer | undefined;
  const http = createServer(route(rt, () => api!, token));
  const host = opts.host ?? '127.0.0.1';
  const port = await listen(http, opts.port ?? 0, host);
  api = crmApi(rt, http, { baseUrl: `http://${host}:${port}`, port, token });
  return api;
}

if (isMainModule(import.meta.url)) {
  await startTracing({ serviceName: 'abada-demo-crm' });
  const crm = await startCrmServer({
    port: Number(cliArg('port') ?? process.env.PORT ?? 4100),
    host: cliArg('host'),
    token: cliArg('token') ?? process.env.CRM_TOKEN ?? null,
    latencyMs: Number(cliArg('latency-ms') ?? 0),
  });
  console.log(`demo CRM MCP server on ${crm.url}${crm.token ? ' (Bearer token required)' : ''}`);
  const stop = () => void crm.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
