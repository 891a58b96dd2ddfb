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
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../shared/canonical.js';
import { startTracing, traceMcpRequest } from '../telemetry/index.js';
import { cliArg, closeServer, isMainModule, listen, readJson, sendJson } from './http-util.js';
import { type CrmCall, type CrmCustomer, CrmState, takeRule } from './crm-state.js';

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

/** The demo CRM: its state, the controls tests use, where it listens, and its held answers. */
export class CrmServer extends CrmState {
  /** The MCP endpoint, e.g. `http://127.0.0.1:4100/mcp`. */
  url = '';
  /** `http://127.0.0.1:4100` (for `/state` and `/control`). */
  baseUrl = '';
  port = 0;
  readonly token: string | null;
  readonly latencyMs: number;
  readonly http: Server = createServer(route(this));
  /** aborted by `close()`: every answer still held ends at once */
  readonly closing = new AbortController();

  constructor(opts: CrmServerOptions) {
    super(opts.overRefunds ?? 'refuse');
    this.token = opts.token ?? null;
    this.latencyMs = opts.latencyMs ?? 0;
  }

  /** Hold the answer of `tool` for `ms` (0 removes); `times` limits it to the next N calls. */
  setDelay(tool: string, ms: number, times?: number) {
    if (ms <= 0) this.delays.delete(tool);
    else this.delays.set(tool, { ms, remaining: times });
  }

  /** The next `tools/list` shows `from` as `to`; calls to `from` then fail as unknown. */
  renameTool(from: string, to: string) {
    if (from === to) this.renames.delete(from);
    else this.renames.set(from, to);
  }

  /** Adds (or removes) an optional `note` field to a tool's input schema: its schema hash changes. */
  alterSchema(tool: string, altered = true) {
    if (altered) this.alteredSchemas.add(tool);
    else this.alteredSchemas.delete(tool);
  }

  /** The next `times` calls of `tool` answer a tool error without any side effect. */
  failNext(tool: string, message = `${tool} failed: CRM temporarily unavailable`, times = 1) {
    this.failures.set(tool, { message, remaining: times });
  }

  /** The next `times` calls of `tool` run, then the connection drops before the answer. */
  dropAnswer(tool: string, times = 1) {
    this.drops.set(tool, { remaining: times });
  }

  /** The next `times` requests of `tool` are lost: the connection drops before the call runs. */
  dropRequest(tool: string, times = 1) {
    this.lostRequests.set(tool, { remaining: times });
  }

  async close() {
    this.closing.abort();
    await closeServer(this.http);
  }
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

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

const toolError = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });

/** One Ajv for every McpServer of the process: one per server cost a third of the double's CPU. */
const sharedValidator = new AjvJsonSchemaValidator();

/** One McpServer per HTTP request, from the current configuration. */
function buildMcpServer(crm: CrmServer, callsById: Map<string | number, CrmCall>, res: ServerResponse) {
  const server = new McpServer(
    { name: 'demo-crm', version: '1.0.0' },
    { jsonSchemaValidator: sharedValidator },
  );
  for (const [tool, def] of Object.entries(TOOL_DEFS)) {
    const shape = crm.alteredSchemas.has(tool)
      ? { ...def.shape, note: z.string().optional().describe('Free text note') }
      : def.shape;
    server.registerTool(
      crm.renames.get(tool) ?? tool,
      { description: def.description, inputSchema: shape },
      async (args: Record<string, unknown>, extra) => {
        // handleMcp recorded every tools/call of the request before the SDK read it
        const record = callsById.get(extra.requestId)!;
        record.tool = tool;
        record.args = args;
        // A lost request: the connection drops before the call runs — no effect, no answer.
        if (takeRule(crm.lostRequests, tool)) {
          record.status = 'error';
          record.error = 'request lost';
          res.socket?.destroy();
          return toolError('connection dropped');
        }
        const outcome = crm.execute(tool, args, record.key);
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
        if (takeRule(crm.drops, tool)) {
          res.socket?.destroy();
          return toolError('connection dropped');
        }
        const ms = (takeRule(crm.delays, tool)?.ms ?? 0) + crm.latencyMs;
        if (ms > 0) await sleep(ms, undefined, { signal: crm.closing.signal });
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

async function handleMcp(crm: CrmServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    // Stateless: no standalone SSE stream (GET) and no session to delete (DELETE).
    return sendJson(res, 405, rpcError(-32000, 'Method not allowed.'));
  }
  const body = await readJson(req, res, rpcError(-32700, 'Parse error'));
  if (body === undefined) return;
  // Record every tools/call, including those the server then refuses (unknown tool, bad arguments).
  const callsById = new Map<string | number, CrmCall>();
  const header = req.headers['idempotency-key'];
  const headerKey = (Array.isArray(header) ? header[0] : header) ?? null;
  for (const msg of Array.isArray(body) ? body : [body]) {
    if (msg && typeof msg === 'object' && msg.method === 'tools/call' && msg.id !== undefined) {
      const params = (msg.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: unknown };
      const meta = (params._meta ?? {}) as Record<string, unknown>;
      const metaKey = typeof meta.idempotencyKey === 'string' ? meta.idempotencyKey : null;
      const args = (params.arguments ?? {}) as Record<string, unknown>;
      callsById.set(msg.id, crm.recordCall(String(params.name), args, headerKey, metaKey));
    }
  }
  const server = buildMcpServer(crm, callsById, res);
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

type Command = Record<string, unknown>;

const optional = <T>(value: unknown, as: (v: unknown) => T) => (value === undefined ? undefined : as(value));

const ACTIONS = new Map<unknown, (crm: CrmServer, cmd: Command) => void>([
  ['reset', (api) => api.reset()],
  ['delay', (api, c) => api.setDelay(String(c.tool), Number(c.ms ?? 0), optional(c.times, Number))],
  ['rename', (api, c) => api.renameTool(String(c.from), String(c.to))],
  ['alterSchema', (api, c) => api.alterSchema(String(c.tool), c.altered !== false)],
  ['fail', (api, c) => api.failNext(String(c.tool), optional(c.message, String), optional(c.times, Number))],
  ['refundByHand', (api, c) => api.refundByHand(String(c.orderId))],
  ['dropAnswer', (api, c) => api.dropAnswer(String(c.tool), optional(c.times, Number))],
  ['dropRequest', (api, c) => api.dropRequest(String(c.tool), optional(c.times, Number))],
  ['addCustomer', (api, c) => api.addCustomer(c.customer as CrmCustomer)],
]);

/** `POST /control`: faults and changes a test or a demo asks for. */
async function handleControl(api: CrmServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const cmd = (await readJson(req, res, { error: 'body must be JSON' })) as Command | undefined;
  if (cmd === undefined) return;
  const action = ACTIONS.get(cmd.action);
  if (!action) return sendJson(res, 400, { error: `unknown action ${String(cmd.action)}` });
  action(api, cmd);
  sendJson(res, 200, { ok: true });
}

function route(crm: CrmServer) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const run = async () => {
      if (path === '/mcp') {
        if (crm.token !== null && req.headers.authorization !== `Bearer ${crm.token}`) {
          res.setHeader('WWW-Authenticate', 'Bearer realm="demo-crm"');
          return sendJson(res, 401, { error: 'unauthorized', message: 'A valid Bearer token is required' });
        }
        await handleMcp(crm, req, res);
      } else if (path === '/state' && req.method === 'GET') {
        sendJson(res, 200, crm.snapshot());
      } else if (path === '/control' && req.method === 'POST') {
        await handleControl(crm, req, res);
      } else {
        sendJson(res, 404, { error: 'not found' });
      }
    };
    run().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, rpcError(-32603, String(err)));
      else res.end();
    });
  };
}

export async function startCrmServer(opts: CrmServerOptions = {}): Promise<CrmServer> {
  const crm = new CrmServer(opts);
  const host = opts.host ?? '127.0.0.1';
  crm.port = await listen(crm.http, opts.port ?? 0, host);
  crm.baseUrl = `http://${host}:${crm.port}`;
  crm.url = `${crm.baseUrl}/mcp`;
  return crm;
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
