import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CrmServer, inputSchemaSha256, startCrmServer } from '../../server/demo/crm-server.js';
import { waitFor } from '../helpers/wait.js';

interface Connected {
  client: Client;
  /** The `Idempotency-Key` header the next requests carry (null = none). */
  setHeaderKey(key: string | null): void;
  close(): Promise<void>;
}

async function connect(url: string, token?: string): Promise<Connected> {
  let headerKey: string | null = null;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      if (headerKey !== null) headers.set('Idempotency-Key', headerKey);
      return fetch(input, { ...init, headers });
    },
  });
  const client = new Client({ name: 'crm-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    setHeaderKey: (key) => {
      headerKey = key;
    },
    close: () => client.close(),
  };
}

type ToolResult = Awaited<ReturnType<Client['callTool']>>;
function textOf(result: ToolResult): string {
  const content = result.content as Array<{ type: string; text?: string }>;
  return content.map((c) => c.text ?? '').join('');
}
function jsonOf(result: ToolResult): Record<string, unknown> {
  return JSON.parse(textOf(result)) as Record<string, unknown>;
}

describe('demo CRM MCP server', () => {
  let crm: CrmServer;
  let conn: Connected;

  beforeAll(async () => {
    crm = await startCrmServer({ port: 0 });
    conn = await connect(crm.url);
  });
  afterAll(async () => {
    await conn.close();
    await crm.close();
  });
  afterEach(() => {
    crm.reset();
    conn.setHeaderKey(null);
  });

  it('lists the seven tools with JSON input schemas', async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'close_ticket',
      'create_ticket',
      'find_refund',
      'get_customer',
      'get_order',
      'refund',
      'send_email',
    ]);
    const refund = tools.find((t) => t.name === 'refund')!;
    expect(refund.inputSchema.type).toBe('object');
    expect(Object.keys(refund.inputSchema.properties ?? {}).sort()).toEqual([
      'amount',
      'currency',
      'orderId',
    ]);
    expect(inputSchemaSha256(refund)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('get_customer returns Alice; an unknown id is a tool error', async () => {
    const alice = await conn.client.callTool({ name: 'get_customer', arguments: { customerId: 'C-42' } });
    expect(alice.isError).toBeFalsy();
    const record = jsonOf(alice);
    expect(record).toMatchObject({ customerId: 'C-42', tier: 'gold', email: 'alice@example.com' });
    expect(record.orders).toEqual([
      expect.objectContaining({ orderId: '5531', amount: 89, currency: 'EUR' }),
    ]);
    expect(alice.structuredContent).toEqual(record);

    const nobody = await conn.client.callTool({ name: 'get_customer', arguments: { customerId: 'C-404' } });
    expect(nobody.isError).toBe(true);
    expect(textOf(nobody)).toContain('not found');
    expect(crm.sideEffects).toHaveLength(0);
    expect(crm.countCalls('get_customer')).toBe(2);
  });

  it('create_ticket, refund, close_ticket and send_email each leave one side effect', async () => {
    const t1 = jsonOf(
      await conn.client.callTool({
        name: 'create_ticket',
        arguments: { customerId: 'C-42', subject: 'Parcel not received', priority: 'high' },
      }),
    );
    expect(t1).toMatchObject({ ticketId: 'T-981', priority: 'high', status: 'open' });
    const t2 = jsonOf(
      await conn.client.callTool({
        name: 'create_ticket',
        arguments: { customerId: 'C-7', subject: 'Other', priority: 'low' },
      }),
    );
    expect(t2.ticketId).toBe('T-982');
    const refund = jsonOf(
      await conn.client.callTool({
        name: 'refund',
        arguments: { orderId: '5531', amount: 89, currency: 'EUR' },
      }),
    );
    expect(refund).toMatchObject({ orderId: '5531', amount: 89, currency: 'EUR', status: 'refunded' });
    expect(refund.refundId).toEqual(expect.any(String));
    const closed = jsonOf(
      await conn.client.callTool({ name: 'close_ticket', arguments: { ticketId: 'T-981' } }),
    );
    expect(closed).toMatchObject({ ticketId: 'T-981', status: 'closed' });
    const mail = jsonOf(
      await conn.client.callTool({
        name: 'send_email',
        arguments: { to: 'alice@example.com', subject: 'Hello', body: 'Your refund' },
      }),
    );
    expect(mail.status).toBe('sent');
    expect(crm.sideEffects.map((e) => e.tool)).toEqual([
      'create_ticket',
      'create_ticket',
      'refund',
      'close_ticket',
      'send_email',
    ]);
    expect(crm.counts().sideEffects).toEqual({ create_ticket: 2, refund: 1, close_ticket: 1, send_email: 1 });

    const missing = await conn.client.callTool({ name: 'close_ticket', arguments: { ticketId: 'T-1' } });
    expect(missing.isError).toBe(true);
    const invalid = await conn.client.callTool({
      name: 'create_ticket',
      arguments: { customerId: 'C-42', subject: 'x', priority: 'urgent' },
    });
    expect(invalid.isError).toBe(true);
    expect(crm.calls.at(-1)).toMatchObject({ tool: 'create_ticket', status: 'error' });
  });

  it('honours the Idempotency-Key header: same key, one side effect, same result', async () => {
    conn.setHeaderKey('task-1:1:4');
    const args = { customerId: 'C-42', subject: 'Parcel not received', priority: 'high' };
    const first = jsonOf(await conn.client.callTool({ name: 'create_ticket', arguments: args }));
    const second = jsonOf(await conn.client.callTool({ name: 'create_ticket', arguments: args }));
    expect(second).toEqual(first);
    expect(crm.countSideEffects('create_ticket')).toBe(1);
    expect(crm.sideEffects[0].key).toBe('task-1:1:4');
    expect(crm.calls.map((c) => [c.key, c.status])).toEqual([
      ['task-1:1:4', 'ok'],
      ['task-1:1:4', 'replayed'],
    ]);
    conn.setHeaderKey('task-1:1:5');
    const third = jsonOf(await conn.client.callTool({ name: 'create_ticket', arguments: args }));
    expect(third.ticketId).toBe('T-982');
  });

  it('honours _meta.idempotencyKey and refuses a reused key with other arguments', async () => {
    const call = (amount: number) =>
      conn.client.callTool({
        name: 'refund',
        arguments: { orderId: '5531', amount, currency: 'EUR' },
        _meta: { idempotencyKey: 'k-refund' },
      });
    const first = jsonOf(await call(89));
    expect(jsonOf(await call(89))).toEqual(first);
    expect(crm.countSideEffects('refund')).toBe(1);
    const divergent = await call(890);
    expect(divergent.isError).toBe(true);
    expect(textOf(divergent)).toContain('already used');
    expect(crm.countSideEffects('refund')).toBe(1);
    expect(crm.calls.map((c) => c.metaKey)).toEqual(['k-refund', 'k-refund', 'k-refund']);
  });

  it('refuses a refund beyond what is left of the order, with no side effect', async () => {
    const refund = (amount: number, key: string) =>
      conn.client.callTool({
        name: 'refund',
        arguments: { orderId: '5531', amount, currency: 'EUR' },
        _meta: { idempotencyKey: key },
      });
    expect(jsonOf(await refund(50, 'part-1')).status).toBe('refunded');
    const over = await refund(40, 'part-2');
    expect(over.isError).toBe(true);
    expect(textOf(over)).toBe(
      'Refund refused: order 5531 has 39 EUR left to refund (refunded already: R-1001 50 EUR)',
    );
    expect(jsonOf(await refund(39, 'part-3')).status).toBe('refunded');
    expect(crm.countSideEffects('refund')).toBe(2);
  });

  it('send_email ignores idempotency keys', async () => {
    conn.setHeaderKey('same');
    const args = { to: 'alice@example.com', subject: 'Hi', body: 'Hello' };
    await conn.client.callTool({ name: 'send_email', arguments: args, _meta: { idempotencyKey: 'same' } });
    await conn.client.callTool({ name: 'send_email', arguments: args, _meta: { idempotencyKey: 'same' } });
    expect(crm.countSideEffects('send_email')).toBe(2);
  });

  it('a renamed tool shows in the next tools/list; an altered schema changes its hash', async () => {
    const before = (await conn.client.listTools()).tools;
    const hashBefore = inputSchemaSha256(before.find((t) => t.name === 'create_ticket')!);
    crm.renameTool('create_ticket', 'open_ticket');
    const renamed = (await conn.client.listTools()).tools.map((t) => t.name);
    expect(renamed).toContain('open_ticket');
    expect(renamed).not.toContain('create_ticket');
    const gone = await conn.client.callTool({
      name: 'create_ticket',
      arguments: { customerId: 'C-42', subject: 's', priority: 'low' },
    });
    expect(gone.isError).toBe(true);
    crm.reset();
    crm.alterSchema('create_ticket');
    const altered = (await conn.client.listTools()).tools.find((t) => t.name === 'create_ticket')!;
    expect(inputSchemaSha256(altered)).not.toBe(hashBefore);
    crm.alterSchema('create_ticket', false);
    const again = (await conn.client.listTools()).tools.find((t) => t.name === 'create_ticket')!;
    expect(inputSchemaSha256(again)).toBe(hashBefore);
  });

  it('a delayed write records its side effect before answering; failNext answers an error', async () => {
    // The answer is held back long enough that seeing the side effect first cannot be a race on any load.
    crm.setDelay('create_ticket', 1000, 1);
    let answered = false;
    const pending = conn.client
      .callTool({
        name: 'create_ticket',
        arguments: { customerId: 'C-42', subject: 'Parcel', priority: 'high' },
        _meta: { idempotencyKey: 'slow' },
      })
      .finally(() => {
        answered = true;
      });
    await waitFor('the side effect of the delayed write', () => crm.countSideEffects('create_ticket') === 1);
    expect(answered).toBe(false);
    expect(crm.calls[0].status).toBe('ok');
    expect(jsonOf(await pending).ticketId).toBe('T-981');

    crm.failNext('refund', 'CRM down');
    const failed = await conn.client.callTool({
      name: 'refund',
      arguments: { orderId: '5531', amount: 89, currency: 'EUR' },
    });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('CRM down');
    expect(crm.countSideEffects('refund')).toBe(0);
  });

  it('a client gone during a delayed write leaves the effect; the re-send with the same key reuses it', async () => {
    crm.setDelay('create_ticket', 2_000, 1);
    const rpc = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'create_ticket',
        arguments: { customerId: 'C-42', subject: 'Parcel', priority: 'high' },
      },
    };
    const sent = fetch(crm.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'idempotency-key': 'task-9:1:4',
      },
      body: JSON.stringify(rpc),
      signal: AbortSignal.timeout(100),
    });
    await expect(sent).rejects.toThrow();
    expect(crm.countSideEffects('create_ticket')).toBe(1);
    conn.setHeaderKey('task-9:1:4');
    const again = await conn.client.callTool({
      name: 'create_ticket',
      arguments: { customerId: 'C-42', subject: 'Parcel', priority: 'high' },
      _meta: { idempotencyKey: 'task-9:1:4' },
    });
    expect(jsonOf(again).ticketId).toBe('T-981');
    expect(crm.countSideEffects('create_ticket')).toBe(1);
    expect(crm.calls.map((c) => c.status)).toEqual(['ok', 'replayed']);
  });

  it('exposes /state and /control over plain HTTP', async () => {
    await conn.client.callTool({
      name: 'create_ticket',
      arguments: { customerId: 'C-42', subject: 'Parcel', priority: 'high' },
    });
    const state = (await (await fetch(`${crm.baseUrl}/state`)).json()) as {
      sideEffects: unknown[];
      calls: unknown[];
    };
    expect(state.sideEffects).toHaveLength(1);
    expect(state.calls).toHaveLength(1);
    const control = (body: unknown) =>
      fetch(`${crm.baseUrl}/control`, { method: 'POST', body: JSON.stringify(body) });
    expect((await control({ action: 'rename', from: 'refund', to: 'refund_v2' })).status).toBe(200);
    expect((await conn.client.listTools()).tools.map((t) => t.name)).toContain('refund_v2');
    expect((await control({ action: 'reset' })).status).toBe(200);
    expect(crm.sideEffects).toHaveLength(0);
    expect((await control({ action: 'nope' })).status).toBe(400);
  });

  it('get_order and find_refund read what the refund tool and a refund by hand did', async () => {
    const order = async () =>
      jsonOf(await conn.client.callTool({ name: 'get_order', arguments: { orderId: '5531' } }));
    expect(await order()).toMatchObject({
      orderId: '5531',
      customerId: 'C-42',
      status: 'lost_parcel',
      amount: 89,
      refundedAmount: 0,
    });
    conn.setHeaderKey('k-5531');
    await conn.client.callTool({
      name: 'refund',
      arguments: { orderId: '5531', amount: 89, currency: 'EUR' },
    });
    conn.setHeaderKey(null);
    expect(await order()).toMatchObject({ status: 'refunded', refundedAmount: 89 });
    const byKey = jsonOf(
      await conn.client.callTool({ name: 'find_refund', arguments: { orderId: '5531', key: 'k-5531' } }),
    );
    expect(byKey.refunds).toEqual([
      expect.objectContaining({ refundId: 'R-1001', amount: 89, key: 'k-5531', byHand: false }),
    ]);
    const otherKey = jsonOf(
      await conn.client.callTool({ name: 'find_refund', arguments: { orderId: '5531', key: 'k-other' } }),
    );
    expect(otherKey.refunds).toEqual([]);
    // reads are not side effects
    expect(crm.counts().sideEffects).toEqual({ refund: 1 });

    crm.reset();
    const control = await fetch(`${crm.baseUrl}/control`, {
      method: 'POST',
      body: JSON.stringify({ action: 'refundByHand', orderId: '5120' }),
    });
    expect(control.status).toBe(200);
    const bob = jsonOf(await conn.client.callTool({ name: 'get_order', arguments: { orderId: '5120' } }));
    expect(bob).toMatchObject({ status: 'refunded', refundedAmount: 59 });
    expect(crm.refunds).toEqual([expect.objectContaining({ orderId: '5120', byHand: true, key: null })]);
    expect(crm.sideEffects).toEqual([]);
  });

  it('dropAnswer: the refund is applied, then the connection drops before the answer', async () => {
    crm.dropAnswer('refund');
    conn.setHeaderKey('k-drop');
    await expect(
      conn.client.callTool({ name: 'refund', arguments: { orderId: '5531', amount: 89, currency: 'EUR' } }),
    ).rejects.toThrow();
    expect(crm.countSideEffects('refund')).toBe(1);
    expect(crm.refunds).toEqual([expect.objectContaining({ key: 'k-drop' })]);
    // only the next call was dropped: the same request again is answered (from the idempotency store)
    const again = await conn.client.callTool({
      name: 'refund',
      arguments: { orderId: '5531', amount: 89, currency: 'EUR' },
    });
    expect(again.isError).toBeFalsy();
    expect(crm.countSideEffects('refund')).toBe(1);
  });
});

describe('demo CRM with a Bearer token', () => {
  let crm: CrmServer;
  beforeAll(async () => {
    crm = await startCrmServer({ token: 'crm-secret' });
  });
  afterAll(async () => {
    await crm.close();
  });

  it('refuses requests without the token with 401', async () => {
    await expect(connect(crm.url)).rejects.toThrow();
    await expect(connect(crm.url, 'wrong')).rejects.toThrow();
    const res = await fetch(crm.url, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
  });

  it('accepts the right token', async () => {
    const conn = await connect(crm.url, 'crm-secret');
    const result = await conn.client.callTool({ name: 'get_customer', arguments: { customerId: 'C-7' } });
    expect(jsonOf(result).name).toBe('Bob Okafor');
    await conn.close();
  });
});
