import { describe, expect, it } from 'vitest';
import { ctx, deployedServer, errorsOf, expectError, processWith } from './fixtures.js';

/** Lines 1-12: a ToolServer document; the process document starts at line 14. */
const SERVER = [
  'kind: ToolServer', // 1
  'name: crm', // 2
  'transport: streamable-http', // 3
  'url: http://127.0.0.1:4100/mcp', // 4
  'tools:', // 5
  '  get_customer: { policy: read }', // 6
  '  create_ticket: { policy: write, idempotency: key }', // 7
  '  refund: { policy: approval_required, approvers: [finance] }', // 8
  '  close: { policy: approval_required }', // 9
  '  escalate:', // 10
  '    policy: approval_required', // 11
  '    approval: [{ when: "amount > 10", levels: [leads] }]', // 12
  '---', // 13
].join('\n');
// processWith: line 1 kind, 2 key, 3 variables, 4 start, 5 nodes, 6 - id, 7 type, 8 model, 9 prompt, 10 result_variable,
// 11 tools:, 12.. tool entries
const withTools = (...tools: string[]) =>
  `${SERVER}\n${processWith({ tools: tools.map((t) => `      - ${t}`).join('\n') })}`;
const TOOL_LINE = 13 + 12; // first tool entry

describe('APL tool errors', () => {
  it('ABADA-APL-TOOL-001 unknown server, with a hint', () => {
    const e = expectError(
      withTools('crm/get_customer', 'cmr/get_customer'),
      'ABADA-APL-TOOL-001',
      TOOL_LINE + 1,
    );
    expect(e.path).toBe('documents[1].nodes[0].tools[1]');
    expect(e.message).toContain('Did you mean "crm"');
  });

  it('ABADA-APL-TOOL-002 unknown tool on a known server', () => {
    const e = expectError(withTools('crm/get_customr'), 'ABADA-APL-TOOL-002', TOOL_LINE);
    expect(e.message).toContain('get_customer');
  });

  it('ABADA-APL-TOOL-003 approval_required without approvers anywhere', () => {
    expectError(withTools('crm/close'), 'ABADA-APL-TOOL-003', TOOL_LINE);
    // a node's empty approvers replace the server's
    expectError(
      withTools('crm/get_customer', '{ ref: crm/refund, approvers: [] }'),
      'ABADA-APL-TOOL-003',
      TOOL_LINE + 1,
    );
    // tightening write → approval_required needs approvers from somewhere
    const e = expectError(
      withTools('{ ref: crm/create_ticket, policy: approval_required }'),
      'ABADA-APL-TOOL-003',
      TOOL_LINE,
    );
    expect(e.path).toBe('documents[1].nodes[0].tools[0].ref');
    // node approvers satisfy it
    expect(errorsOf(withTools('{ ref: crm/close, approvers: [ops] }'))).toEqual([]);
    // conditional rules alone do not: a call that matches no rule still needs someone to decide it
    expect(expectError(withTools('crm/escalate'), 'ABADA-APL-TOOL-003', TOOL_LINE).message).toMatch(
      /no approvers for calls that match none/,
    );
    expect(errorsOf(withTools('{ ref: crm/escalate, approvers: [ops] }'))).toEqual([]);
  });

  it('ABADA-APL-TOOL-004 a node loosening a policy', () => {
    const e = expectError(
      withTools('crm/get_customer', '{ ref: crm/refund, policy: write }'),
      'ABADA-APL-TOOL-004',
      TOOL_LINE + 1,
    );
    expect(e.path).toBe('documents[1].nodes[0].tools[1].policy');
    expectError(withTools('{ ref: crm/create_ticket, policy: read }'), 'ABADA-APL-TOOL-004', TOOL_LINE);
  });

  it('ABADA-APL-TOOL-005 a server outside ABADA_AGENT_ALLOWED_TOOLS', () => {
    const c = ctx({ allowedTools: ['crm/get_customer'] });
    expectError(withTools('crm/get_customer', 'crm/create_ticket'), 'ABADA-APL-TOOL-005', TOOL_LINE + 1, c);
    expect(errorsOf(withTools('crm/refund'), ctx({ allowedTools: ['crm'] }))).toEqual([]);
  });

  it('ABADA-APL-TOOL-006 duplicate tool ref on a node', () => {
    expectError(
      withTools('crm/get_customer', 'crm/refund', '{ ref: crm/get_customer }'),
      'ABADA-APL-TOOL-006',
      TOOL_LINE + 2,
    );
  });

  it('ABADA-APL-TOOL-007 bad input_schema_sha256', () => {
    const src = SERVER.replace('{ policy: read }', '{ policy: read, input_schema_sha256: abc }');
    expectError(
      `${src}\n${processWith()}`,
      'ABADA-APL-TOOL-007',
      6,
      ctx(),
      'documents[0].tools.get_customer.input_schema_sha256',
    );
  });

  it('ABADA-APL-TOOL-008 malformed tool ref', () => {
    expectError(withTools('crm/get_customer', 'just-a-name'), 'ABADA-APL-TOOL-008', TOOL_LINE + 1);
    expectError(withTools('delegate:Bad Key'), 'ABADA-APL-TOOL-008', TOOL_LINE);
  });

  it('ABADA-APL-DELEGATE-001 delegate target neither deployed nor in the source', () => {
    expectError(withTools('delegate:kyc-check'), 'ABADA-APL-DELEGATE-001', TOOL_LINE);
    expect(errorsOf(withTools('delegate:kyc-check'), ctx({ processKeys: new Set(['kyc-check']) }))).toEqual(
      [],
    );
  });

  it('ABADA-APL-MODEL-001 model and fallback models outside the allow list', () => {
    const src = processWith({ agentExtra: '    fallback_models: [m2, m3]\n' });
    const errors = errorsOf(src, ctx({ allowedModels: ['m2'] }));
    expect(errors.map((e) => [e.code, e.line, e.path])).toEqual([
      ['ABADA-APL-MODEL-001', 8, 'documents[0].nodes[0].model'],
      ['ABADA-APL-MODEL-001', 11, 'documents[0].nodes[0].fallback_models[1]'],
    ]);
  });

  it('a deployed server in the context resolves; an unknown tool on it is TOOL-002', () => {
    const c = ctx({ toolServers: new Map([['billing', deployedServer()]]) });
    expect(errorsOf(processWith({ tools: '      - billing/lookup' }), c)).toEqual([]);
    expectError(processWith({ tools: '      - billing/refund' }), 'ABADA-APL-TOOL-002', 12, c);
  });

  it('collects every tool error at once', () => {
    const errors = errorsOf(
      withTools('nope/x', 'crm/nope', 'crm/close', '{ ref: crm/refund, policy: read }', 'crm/nope'),
    );
    expect(errors.map((e) => e.code)).toEqual([
      'ABADA-APL-TOOL-001',
      'ABADA-APL-TOOL-002',
      'ABADA-APL-TOOL-003',
      'ABADA-APL-TOOL-004',
      'ABADA-APL-TOOL-006',
    ]);
    expect(errors.map((e) => e.line)).toEqual([25, 26, 27, 28, 29]);
  });
});
