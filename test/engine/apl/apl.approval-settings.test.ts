// biome-ignore-all lint/suspicious/noTemplateCurlyInString: APL sources use ${name} templates literally
import { describe, expect, it } from 'vitest';
import {
  type AgentNode,
  bindingPolicy,
  renderTemplate,
  type ToolBinding,
} from '../../../server/engine/definitions/index.js';
import {
  nodeRedactInputs,
  renderArguments,
  validateSource,
} from '../../../server/engine/definitions/testing.js';
import { ctx, deployedServer, errorsOf, expectError, processWith, SETTING_DEFAULTS } from './fixtures.js';

/** Lines 1-26: the SPEC §11 ToolServer; the process document starts at line 28. */
const SERVER = [
  'kind: ToolServer', // 1
  'name: crm', // 2
  'transport: streamable-http', // 3
  'url: http://127.0.0.1:4100/mcp', // 4
  'tools:', // 5
  '  get_order: { policy: read }', // 6
  '  find_refund: { policy: read }', // 7
  '  create_ticket: { policy: write, idempotency: key }', // 8
  '  refund:', // 9
  '    policy: approval_required', // 10
  '    idempotency: key', // 11
  '    approvers: [finance]', // 12
  '    impact: "Refund ${amount} ${currency} to order ${orderId}"', // 13
  '    reversible: false', // 14
  '    risk: high', // 15
  '    approval_valid_minutes: 60', // 16
  '    approval_timeout_hours: 24', // 17
  '    precondition:', // 18
  '      tool: crm/get_order', // 19
  '      arguments: { orderId: "${arguments.orderId}" }', // 20
  `      expect: "status == 'PAYMENT_CAPTURED' && amount >= arguments.amount"`, // 21
  '    lookup:', // 22
  '      tool: crm/find_refund', // 23
  '      arguments: { orderId: "${arguments.orderId}", key: "${idempotencyKey}" }', // 24
  '      found: "len(refunds) > 0"', // 25
  '    redact_result: [card.number]', // 26
  '---', // 27
].join('\n');
const TOOL_LINE = 27 + 12; // the process's first tool entry
const withTools = (tools: string[], server = SERVER) =>
  `${server}\n${processWith({ tools: tools.map((t) => `      - ${t}`).join('\n') })}`;
const ALL = ['crm/get_order', 'crm/find_refund'];
/** The server with line `n` (1-based) replaced. */
const serverWith = (n: number, line: string) =>
  SERVER.split('\n')
    .map((l, i) => (i === n - 1 ? line : l))
    .join('\n');

function bindings(source: string, context = ctx()): ToolBinding[] {
  const r = validateSource(source, context);
  if (!r.ok) throw new Error(JSON.stringify(r.errors, null, 1));
  return (r.deployment.processes[0].nodes[0] as AgentNode).bindings;
}
const codes = (source: string) => errorsOf(source).map((e) => [e.code, e.line, e.path]);

const REFUND = {
  impact: 'Refund ${amount} ${currency} to order ${orderId}',
  reversible: false,
  risk: 'high',
  approvalValidMinutes: 60,
  approvalTimeoutHours: 24,
  precondition: {
    tool: 'crm/get_order',
    arguments: { orderId: '${arguments.orderId}' },
    expect: "status == 'PAYMENT_CAPTURED' && amount >= arguments.amount",
  },
  lookup: {
    tool: 'crm/find_refund',
    arguments: { orderId: '${arguments.orderId}', key: '${idempotencyKey}' },
    found: 'len(refunds) > 0',
  },
  redactResult: ['card.number'],
};

describe('APL approval settings (SPEC §11)', () => {
  it('parses the SPEC §11 tool and freezes its settings into the binding; others get the defaults', () => {
    const r = validateSource(withTools([...ALL, 'crm/refund']), ctx());
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.deployment.toolServers[0].tools.refund).toMatchObject(REFUND);
    const [order, , refund] = (r.deployment.processes[0].nodes[0] as AgentNode).bindings;
    expect(refund).toMatchObject({ ref: 'crm/refund', ...REFUND });
    expect(order).toMatchObject(SETTING_DEFAULTS);
    expect((r.deployment.processes[0].nodes[0] as AgentNode).redactInputs).toEqual([]);
  });

  it('a node may tighten: shorter windows, higher risk, reversible: false, a guard where none is declared', () => {
    const [, , refund, ticket] = bindings(
      withTools([
        ...ALL,
        '{ ref: crm/refund, approval_valid_minutes: 15, approval_timeout_hours: 2, impact: "Pay back ${amount}" }',
        '{ ref: crm/create_ticket, policy: approval_required, approvers: [ops], risk: high, reversible: false, approval_timeout_hours: 1, precondition: { tool: crm/get_order, expect: "open" } }',
      ]),
    );
    expect(refund).toMatchObject({
      ...REFUND,
      approvalValidMinutes: 15,
      approvalTimeoutHours: 2,
      impact: 'Pay back ${amount}',
    });
    expect(ticket).toMatchObject({
      risk: 'high',
      reversible: false,
      approvalValidMinutes: 1440,
      approvalTimeoutHours: 1,
      precondition: { tool: 'crm/get_order', arguments: {}, expect: 'open' },
      lookup: null,
    });
    // redact_result on a node adds paths to the tool's
    const [, , r2] = bindings(withTools([...ALL, '{ ref: crm/refund, redact_result: [iban] }']));
    expect(r2.redactResult).toEqual(['card.number', 'iban']);
  });

  it('ABADA-APL-TOOL-009 a node loosening an approval setting, each on its field', () => {
    const entry =
      '{ ref: crm/refund, risk: low, reversible: true, approval_valid_minutes: 61, approval_timeout_hours: 25 }';
    const p = 'documents[1].nodes[0].tools[2]';
    expect(codes(withTools([...ALL, entry]))).toEqual([
      ['ABADA-APL-TOOL-009', TOOL_LINE + 2, `${p}.risk`],
      ['ABADA-APL-TOOL-009', TOOL_LINE + 2, `${p}.reversible`],
      ['ABADA-APL-TOOL-009', TOOL_LINE + 2, `${p}.approval_valid_minutes`],
      ['ABADA-APL-TOOL-009', TOOL_LINE + 2, `${p}.approval_timeout_hours`],
    ]);
    const e = expectError(
      withTools([...ALL, '{ ref: crm/refund, precondition: { tool: crm/get_order, expect: "true" } }']),
      'ABADA-APL-TOOL-009',
      TOOL_LINE + 2,
    );
    expect(e.message).toContain('its own precondition');
    // the default window (1440) bounds a node as well
    expectError(
      withTools(['{ ref: crm/create_ticket, approval_valid_minutes: 2000 }']),
      'ABADA-APL-TOOL-009',
      TOOL_LINE,
    );
  });

  it('ABADA-APL-GUARD-001 a guard naming no tool (on the server, or on the node)', () => {
    const e = expectError(
      withTools([...ALL, 'crm/refund'], serverWith(19, '      tool: crm/get_ordr')),
      'ABADA-APL-GUARD-001',
      19,
      ctx(),
      'documents[0].tools.refund.precondition.tool',
    );
    expect(e.message).toContain('Did you mean "get_order"');
    expectError(
      withTools(['crm/refund'], serverWith(19, '      tool: get_order')),
      'ABADA-APL-GUARD-001',
      19,
    );
    expectError(
      withTools([...ALL, '{ ref: crm/create_ticket, lookup: { tool: erp/find, found: "true" } }']),
      'ABADA-APL-GUARD-001',
      TOOL_LINE + 2,
      ctx(),
      'documents[1].nodes[0].tools[2].lookup.tool',
    );
  });

  it('ABADA-APL-GUARD-002 a guard naming a tool that writes', () => {
    expectError(
      withTools([...ALL, 'crm/refund'], serverWith(19, '      tool: crm/create_ticket')),
      'ABADA-APL-GUARD-002',
      19,
    );
    // bound on the node, but tightened to write there
    const e = expectError(
      withTools(['{ ref: crm/get_order, policy: write }', 'crm/find_refund', 'crm/refund']),
      'ABADA-APL-GUARD-002',
      TOOL_LINE + 2,
    );
    expect(e.message).toContain('is write on this node');
  });

  it('ABADA-APL-GUARD-003 a guard tool not bound on the same node, reported once per guard', () => {
    const e = expectError(
      withTools(['crm/find_refund', 'crm/refund']),
      'ABADA-APL-GUARD-003',
      TOOL_LINE + 1,
      ctx(),
      'documents[1].nodes[0].tools[1]',
    );
    expect(e.message).toContain('Add crm/get_order');
    expect(codes(withTools(['crm/refund'])).map((c) => c[0])).toEqual([
      'ABADA-APL-GUARD-003',
      'ABADA-APL-GUARD-003',
    ]);
  });

  it('ABADA-APL-GUARD-004 a precondition only on approval_required tools, a lookup only on writes', () => {
    const server = SERVER.replace(
      '  create_ticket: { policy: write, idempotency: key }',
      '  create_ticket: { policy: write, idempotency: key, precondition: { tool: crm/get_order, expect: "true" } }',
    );
    expectError(
      withTools(ALL, server),
      'ABADA-APL-GUARD-004',
      8,
      ctx(),
      'documents[0].tools.create_ticket.precondition',
    );
    const readLookup = SERVER.replace(
      '  find_refund: { policy: read }',
      '  find_refund: { policy: read, lookup: { tool: crm/get_order, found: "true" } }',
    );
    expectError(withTools(ALL, readLookup), 'ABADA-APL-GUARD-004', 7);
    expectError(
      withTools([
        ...ALL,
        '{ ref: crm/create_ticket, precondition: { tool: crm/get_order, expect: "true" } }',
      ]),
      'ABADA-APL-GUARD-004',
      TOOL_LINE + 2,
    );
  });

  it('ABADA-APL-GUARD-005 ${idempotencyKey} in the lookup of an idempotency: none tool', () => {
    const e = expectError(
      withTools([...ALL, 'crm/refund'], serverWith(11, '    idempotency: none')),
      'ABADA-APL-GUARD-005',
      24,
      ctx(),
      'documents[0].tools.refund.lookup.arguments.key',
    );
    expect(e.message).toContain('idempotency: none');
  });

  it('ABADA-APL-TEMPLATE-001 a ${…} that does not parse or names no argument', () => {
    expectError(
      withTools(ALL, serverWith(13, '    impact: "Refund ${amount"')),
      'ABADA-APL-TEMPLATE-001',
      13,
    );
    expectError(withTools(ALL, serverWith(13, '    impact: "Refund ${1x}"')), 'ABADA-APL-TEMPLATE-001', 13);
    const key = expectError(
      withTools(ALL, serverWith(13, '    impact: "Refund ${idempotencyKey}"')),
      'ABADA-APL-TEMPLATE-001',
      13,
    );
    expect(key.message).toContain('only to a lookup');
    expectError(
      withTools(ALL, serverWith(20, '      arguments: { orderId: "${idempotencyKey}" }')),
      'ABADA-APL-TEMPLATE-001',
      20,
      ctx(),
      'documents[0].tools.refund.precondition.arguments.orderId',
    );
    expectError(
      withTools(ALL, serverWith(24, '      arguments: { q: [{ id: "${arguments}" }] }')),
      'ABADA-APL-TEMPLATE-001',
      24,
      ctx(),
      'documents[0].tools.refund.lookup.arguments.q[0].id',
    );
    expect(
      errorsOf(withTools(ALL, serverWith(13, '    impact: "${arguments.order.id} ${items[0].sku}"'))),
    ).toEqual([]);
  });

  it('ABADA-APL-EXPR-001 an expect or found that does not parse; DOC-002/003 on a malformed guard', () => {
    expectError(withTools(ALL, serverWith(21, '      expect: "status ==="')), 'ABADA-APL-EXPR-001', 21);
    expectError(withTools(ALL, serverWith(25, '      found: "len(refunds"')), 'ABADA-APL-EXPR-001', 25);
    expectError(withTools(ALL, serverWith(25, '      fund: "true"')), 'ABADA-APL-DOC-003', 25);
    expectError(withTools(ALL, serverWith(15, '    risk: extreme')), 'ABADA-APL-DOC-002', 15);
    // a malformed override is reported once, not also as loosening
    expect(
      codes(withTools([...ALL, '{ ref: crm/refund, reversible: maybe, risk: extreme }'])).map((c) => c[0]),
    ).toEqual(['ABADA-APL-DOC-002', 'ABADA-APL-DOC-002']);
    expectError(withTools(ALL, serverWith(16, '    approval_valid_minutes: 0')), 'ABADA-APL-LIMIT-001', 16);
  });

  it('ABADA-APL-REDACT-001 a malformed redact_result or a redact_inputs naming no input', () => {
    expectError(withTools(ALL, serverWith(26, '    redact_result: ["a..b"]')), 'ABADA-APL-REDACT-001', 26);
    const src = processWith({
      agentExtra: '    inputs: { card: "${amount}" }\n    redact_inputs: [card.number, crad]\n',
    });
    const e = expectError(src, 'ABADA-APL-REDACT-001', 12, ctx(), 'documents[0].nodes[0].redact_inputs[1]');
    expect(e.message).toContain('Did you mean "card"');
    const ok = validateSource(src.replace(', crad]', ']'), ctx());
    expect(ok.ok && (ok.deployment.processes[0].nodes[0] as AgentNode).redactInputs).toEqual(['card.number']);
  });

  it('a broken guard on the server is reported there only, not again on every node binding it', () => {
    expect(codes(withTools([...ALL, 'crm/refund'], serverWith(19, '      tool: crm/nope')))).toEqual([
      ['ABADA-APL-GUARD-001', 19, 'documents[0].tools.refund.precondition.tool'],
    ]);
    // a guard tool whose own entry failed is not reported as unbound
    expect(
      codes(withTools(['crm/get_order', '{ ref: crm/find_refund, policy: bogus }', 'crm/refund'])).map(
        (c) => c[0],
      ),
    ).toEqual(['ABADA-APL-DOC-002']);
  });
});

describe('bindings frozen before the approval settings', () => {
  it('a tool server stored before them binds with the defaults, and a node may tighten it', () => {
    const context = ctx({ toolServers: new Map([['billing', deployedServer()]]) });
    const [charge] = bindings(processWith({ tools: '      - { ref: billing/charge, risk: high }' }), context);
    expect(charge).toMatchObject({ ...SETTING_DEFAULTS, risk: 'high' });
  });

  it('bindingPolicy reads an old binding with the behaviour it had: no window, no timeout, no guards', () => {
    const old = { ref: 'crm/refund', policy: 'approval_required' } as ToolBinding;
    expect(bindingPolicy(old)).toEqual({ ...SETTING_DEFAULTS, approvalValidMinutes: null });
    expect(bindingPolicy({ ...old, ...REFUND } as ToolBinding)).toEqual(REFUND);
    expect(nodeRedactInputs({})).toEqual([]);
  });
});

describe('templates', () => {
  const args = { amount: 89, currency: 'EUR', orderId: '5531', order: { lines: [{ sku: 'A' }] } };
  it('renders text, and a lone ${…} as the value itself', () => {
    expect(renderTemplate(REFUND.impact, args)).toBe('Refund 89 EUR to order 5531');
    expect(renderTemplate('${arguments.amount}', args)).toBe(89);
    expect(renderTemplate('${order.lines[0].sku}/${missing}', args)).toBe('A/');
    expect(renderArguments(REFUND.lookup.arguments, args, 'abada-k')).toEqual({
      orderId: '5531',
      key: 'abada-k',
    });
    expect(renderArguments({ n: ['${amount}', 1] }, args)).toEqual({ n: [89, 1] });
  });
});
