/**
 * Tool annotations tighten, never loosen: a real MCP server marks `erase_customer` destructiveHint: true;
 * a definition that binds it as `read` fails its attempt TOOL_CONTRACT_MISMATCH at the contract check
 * (before the model sees anything), and the TASK_FAILED incident names the tool. The same tool bound as
 * `write` passes the check.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { workerConfig } from '../../server/worker/config.js';
import { startWorker, type WorkerHandle } from '../../server/worker/loop.js';
import { Q } from '../helpers/fixtures.js';
import { type Harness, instance, startHarness, startProcess, waitFor } from './helpers.js';

/** A stateless MCP server whose one tool says it is destructive. */
function startVault() {
  const server = http.createServer(async (req, res) => {
    const mcp = new McpServer({ name: 'vault', version: '1.0.0' });
    mcp.registerTool(
      'erase_customer',
      {
        description: 'Erases a customer and all their data.',
        inputSchema: { customerId: z.string() },
        annotations: { destructiveHint: true, readOnlyHint: false },
      },
      async () => ({ content: [{ type: 'text', text: 'erased' }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
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

const SOURCE = (url: string, policy: string, key: string) => `
kind: ToolServer
name: vault-${key}
transport: streamable-http
url: ${url}
tools:
  erase_customer: { policy: ${policy}${policy === 'write' ? ', idempotency: key' : ''} }
---
kind: Process
key: ${key}
variables: { customerId: { type: string, required: true } }
start: erase
nodes:
  - id: erase
    type: agent
    model: gemini-3.6-flash
    prompt: Erase the customer and answer in JSON.
    inputs:
      customerId: \${customerId}
    tools: [vault-${key}/erase_customer]
    result_variable: erased
    max_attempts: 1
    next: done
  - { id: done, type: end }
`;

let h: Harness;
let vault: Awaited<ReturnType<typeof startVault>>;
let worker: WorkerHandle | null = null;

beforeAll(async () => {
  [h, vault] = await Promise.all([startHarness(), startVault()]);
  await h.engine.ok(h.engine.adminToken, Q.deploy, { s: SOURCE(vault.url, 'read', 'erase-as-read') });
  await h.engine.ok(h.engine.adminToken, Q.deploy, { s: SOURCE(vault.url, 'write', 'erase-as-write') });
  worker = await startWorker(
    workerConfig({
      engineUrl: h.engine.url,
      token: h.workerToken,
      workerId: 'annotations-worker',
      modelBaseUrl: h.model.url,
      pollMs: 1000,
      lockMs: 5000,
      logLevel: 'silent',
    }),
  );
});
afterEach(() => h.model.reset());
afterAll(async () => {
  await worker?.stop();
  vault?.close();
  await h?.close();
});

describe('MCP tool annotations', () => {
  it('refuses a destructive tool bound as read: the attempt fails and an incident names the tool', async () => {
    const id = await startProcess(h, 'erase-as-read', { customerId: 'C-42' });
    const inst = await waitFor('the task to fail', async () => {
      const i = await instance(h, id);
      return i.tasks[0]?.state === 'FAILED' ? i : null;
    });
    expect(inst.tasks[0].errorType).toBe('TOOL_CONTRACT_MISMATCH');
    expect(inst.tasks[0].errorMessage).toContain('vault-erase-as-read/erase_customer');
    expect(inst.tasks[0].errorMessage).toContain('destructiveHint: true');
    expect(inst.tasks[0].steps).toEqual([]);
    expect(h.model.callCount).toBe(0);
    const { incidents } = await h.engine.ok(
      h.engine.adminToken,
      `{ incidents(first: 50) { edges { node { type message processInstanceId } } } }`,
    );
    const incident = incidents.edges
      .map((e: { node: { type: string; message: string; processInstanceId: string } }) => e.node)
      .find((n: { processInstanceId: string }) => n.processInstanceId === id);
    expect(incident).toMatchObject({ type: 'TASK_FAILED' });
    expect(incident.message).toContain('vault-erase-as-read/erase_customer');
  }, 30_000);

  it('lets the same tool through the check when it is bound as write', async () => {
    const id = await startProcess(h, 'erase-as-write', { customerId: 'C-42' });
    await waitFor('the model to be asked', async () => h.model.callCount > 0);
    const i = await instance(h, id);
    expect(i.tasks[0]?.errorType ?? null).not.toBe('TOOL_CONTRACT_MISMATCH');
  }, 30_000);
});
