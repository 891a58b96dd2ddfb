/**
 * A fault-injecting HTTP proxy in front of an MCP server (streamable HTTP), for tests and the soak: the
 * worker talks to the proxy's `/mcp` as it would to the server, and the proxy, on demand and per tool,
 * makes the answer of a `tools/call` go wrong the ways real tool servers and their load balancers do:
 *
 *   status   answers an HTTP error (503 by default) WITHOUT forwarding: the tool never ran
 *   status-after  forwards (the tool runs, its side effect is done), then answers the HTTP error instead
 *   hang     never answers (the request stays open until the client gives up or the proxy closes)
 *   drop     forwards, sends the status line, headers and half the body, then closes the connection
 *   slow     forwards, then holds the whole answer `ms` before sending it
 *
 * Anything else (initialize, tools/list, a tool without a rule) passes through unchanged. Rules count
 * down (`times`, default 1; `Infinity` for every call) and can be cleared.
 */
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { closeServer, listen, readBody } from './http-util.js';
import { parseJson } from './scripts.js';

export type McpFault = 'status' | 'status-after' | 'hang' | 'drop' | 'slow';

export interface FaultRule {
  fault: McpFault;
  /** how many calls of the tool it applies to (default 1) */
  times?: number;
  /** HTTP status of `status` / `status-after` (default 503) */
  status?: number;
  /** `status` / `status-after`: the Retry-After header sent with the error (none by default) */
  retryAfter?: string;
  /** `slow`: how long the answer is held */
  ms?: number;
}

export type McpFaultProxy = Awaited<ReturnType<typeof startMcpFaultProxy>>;

/** Starts a proxy that forwards to `target` (an MCP URL such as the demo CRM's `/mcp`). */
export async function startMcpFaultProxy(target: string, host = '127.0.0.1') {
  const to = new URL(target);
  const rules = new Map<string, FaultRule & { left: number }>();
  const seen: { tool: string; fault: McpFault | null; at: number }[] = [];
  const held = new Set<ServerResponse>();

  /** The rule a `tools/call` meets (counted down, the call recorded in `seen`); null for anything else. */
  const take = (body: string): FaultRule | null => {
    const msg = parseJson(body) as { method?: string; params?: { name?: unknown } } | undefined;
    const tool = msg?.method === 'tools/call' ? msg.params?.name : undefined;
    if (typeof tool !== 'string') return null;
    const rule = rules.get(tool);
    if (rule && --rule.left <= 0) rules.delete(tool);
    seen.push({ tool, fault: rule?.fault ?? null, at: Date.now() });
    return rule ?? null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const rule = take(body);
    if (rule?.fault === 'hang') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (rule?.fault === 'status') return sendError(res, rule.status ?? 503, rule.retryAfter);
    const answer = await forward(to, req, body);
    if (rule?.fault === 'status-after') return sendError(res, rule.status ?? 503, rule.retryAfter);
    if (rule?.fault === 'slow') await new Promise((r) => setTimeout(r, rule.ms ?? 1000));
    const { 'transfer-encoding': _, ...headers } = answer.headers;
    res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) });
    if (rule?.fault === 'drop') {
      res.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.end(answer.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 502);
      else res.socket?.destroy();
    });
  });
  const port = await listen(server, 0, host);
  return {
    /** the proxy's MCP endpoint, e.g. `http://127.0.0.1:5123/mcp` */
    url: `http://${host}:${port}${to.pathname}`,
    inject(tool: string, rule: FaultRule) {
      rules.set(tool, { ...rule, left: rule.times ?? 1 });
    },
    clear(tool?: string) {
      if (tool) rules.delete(tool);
      else rules.clear();
    },
    /** calls seen per tool, and which fault each met */
    seen,
    /** requests held open by `hang` right now */
    holding: () => held.size,
    async close() {
      for (const res of held) res.socket?.destroy();
      await closeServer(server);
    },
  };
}

/** Sends the request on to the MCP server and reads its whole answer. */
function forward(
  to: URL,
  req: IncomingMessage,
  body: string,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: to.host, 'content-length': String(Buffer.byteLength(body)) };
    const out = httpRequest(to, { method: req.method, headers }, (res) => {
      buffer(res).then(
        (all) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: all }),
        reject,
      );
    });
    out.on('error', reject);
    out.end(body);
  });
}

function sendError(res: ServerResponse, status: number, retryAfter?: string) {
  res.writeHead(status, {
    'content-type': 'text/plain',
    ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
  });
  res.end(`upstream unavailable (HTTP ${status}, injected)`);
}
