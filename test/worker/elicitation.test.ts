/**
 * ABADA_MCP_ELICITATION against a real MCP server (streamable HTTP) whose tools ask for input mid-call:
 * `none` (the default) declares no capability, so the server's request fails; `defaults` accepts a form
 * whose every required field has a default — with the server's defaults, nothing of the worker's own —
 * and declines one that needs a person. Each answer is reported (the worker logs it).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ElicitationNotice, ElicitationPolicy } from '../../server/worker/elicitation.js';
import { ToolSessions } from '../../server/worker/mcp.js';
import { readBinding } from '../helpers/bindings.js';

const FORMS = {
  // every required field has a default
  shipping_note: {
    type: 'object' as const,
    properties: {
      carrier: { type: 'string' as const, default: 'DHL' },
      insured: { type: 'boolean' as const, default: true },
    },
    required: ['carrier'],
  },
  // needs a person: `confirm` has no default
  wipe_disk: {
    type: 'object' as const,
    properties: { confirm: { type: 'boolean' as const } },
    required: ['confirm'],
  },
};

/** A stateful MCP server (it must remember the client's capabilities) whose tools ask for input. */
function startAsker() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res);
    const mcp = new McpServer({ name: 'asker', version: '1.0.0' });
    for (const [name, requestedSchema] of Object.entries(FORMS))
      mcp.registerTool(name, { description: `asks for input (${name})` }, async () => {
        try {
          const answer = await mcp.server.elicitInput({ message: `Details for ${name}?`, requestedSchema });
          return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
        } catch (e) {
          return { isError: true, content: [{ type: 'text', text: (e as Error).message }] };
        }
      });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  return new Promise<{ url: string; close: () => void }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        close: () => server.close(),
      }),
    ),
  );
}

const binding = (url: string, tool: string) => readBinding(url, 'asker', tool);

let asker: Awaited<ReturnType<typeof startAsker>>;
beforeAll(async () => {
  asker = await startAsker();
});
afterAll(() => asker.close());

async function callWith(policy: ElicitationPolicy | undefined, tool: keyof typeof FORMS) {
  const notices: ElicitationNotice[] = [];
  const sessions = new ToolSessions({
    timeoutMs: 10_000,
    elicitation: policy,
    onElicitation: (n) => notices.push(n),
    allowedTools: null,
    credential: async () => null,
  });
  try {
    return { result: await sessions.call(binding(asker.url, tool), {}, null), notices };
  } finally {
    await sessions.closeAll();
  }
}

describe('a tool server asks for input in the middle of a call', () => {
  it('by default the worker declares no elicitation: the server cannot ask', async () => {
    const { result, notices } = await callWith(undefined, 'shipping_note');
    expect(result).toMatchObject({ ok: false });
    expect(!result.ok && result.error).toMatch(/does not support form elicitation/);
    expect(notices).toEqual([]);
  });

  it('defaults: a form with a default for every required field is accepted with the server’s defaults', async () => {
    const { result, notices } = await callWith('defaults', 'shipping_note');
    expect(result).toMatchObject({ ok: true });
    expect(JSON.parse(result.ok ? String(result.response) : '{}')).toEqual({
      action: 'accept',
      content: { carrier: 'DHL', insured: true },
    });
    expect(notices).toEqual([
      { server: 'asker', message: 'Details for shipping_note?', action: 'accept', missing: [] },
    ]);
  });

  it('defaults: a form that needs a person is declined, and says which field', async () => {
    const { result, notices } = await callWith('defaults', 'wipe_disk');
    expect(result).toMatchObject({ ok: true });
    expect(JSON.parse(result.ok ? String(result.response) : '{}')).toEqual({ action: 'decline' });
    expect(notices).toEqual([
      { server: 'asker', message: 'Details for wipe_disk?', action: 'decline', missing: ['confirm'] },
    ]);
  });
});
