// biome-ignore-all lint/suspicious/noTemplateCurlyInString: APL sources use ${name} templates literally
import { describe, expect, it } from 'vitest';
import type { AgentNode, ToolBinding } from '../../../server/engine/definitions/index.js';
import { validateSource, type ValidatedDeployment } from '../../../server/engine/definitions/testing.js';
import {
  ctx,
  deployedServer,
  errorsOf,
  PIN,
  processWith,
  SETTING_DEFAULTS,
  SPEC_EXAMPLE,
} from './fixtures.js';

function deploy(source: string, context = ctx()): ValidatedDeployment {
  const r = validateSource(source, context);
  if (!r.ok) throw new Error(JSON.stringify(r.errors, null, 1));
  return r.deployment;
}

const crmBinding = (over: Partial<ToolBinding>): ToolBinding => ({
  ref: '',
  server: 'crm',
  tool: '',
  policy: 'read',
  idempotency: 'none',
  transport: 'streamable-http',
  url: 'http://127.0.0.1:4100/mcp',
  command: null,
  args: [],
  env: {},
  credential: 'crm-token',
  credentialEnv: null,
  inputSchemaSha256: null,
  approvers: [],
  approvalSlaHours: null,
  editable: false,
  redact: [],
  approvalRules: [],
  validate: [],
  inputSchema: null,
  ...SETTING_DEFAULTS,
  ...over,
});

describe('APL deployment of the SPEC §2 example', () => {
  it('deploys and freezes the exact bindings', () => {
    const d = deploy(SPEC_EXAMPLE);
    expect(d.toolServers).toHaveLength(1);
    expect(d.toolServers[0]).toMatchObject({
      name: 'crm',
      transport: 'streamable-http',
      url: 'http://127.0.0.1:4100/mcp',
      credential: 'crm-token',
      command: null,
      args: [],
      env: {},
      credentialEnv: null,
    });
    expect(Object.keys(d.toolServers[0].tools)).toEqual(['get_customer', 'create_ticket', 'refund']);
    expect(d.toolServers[0].tools.get_customer.idempotency).toBe('none');
    expect(d.processes).toHaveLength(1);
    const p = d.processes[0];
    expect(p.key).toBe('support-triage');
    expect(p.start).toBe('triage');
    expect(p.variables).toEqual({
      customerId: { type: 'string', required: true },
      message: { type: 'string', required: false },
    });
    expect(p.nodes.map((n) => [n.id, n.type, n.next])).toEqual([
      ['triage', 'agent', 'notify_customer'],
      ['notify_customer', 'service', 'done'],
      ['review', 'user_task', 'done'],
      ['done', 'end', null],
    ]);
    const triage = p.nodes[0] as AgentNode;
    expect(triage.bindings).toEqual([
      crmBinding({ ref: 'crm/get_customer', tool: 'get_customer' }),
      crmBinding({ ref: 'crm/create_ticket', tool: 'create_ticket', policy: 'write', idempotency: 'key' }),
      crmBinding({
        ref: 'crm/refund',
        tool: 'refund',
        policy: 'approval_required',
        idempotency: 'key',
        approvers: ['finance-leads'],
        approvalSlaHours: 4,
        inputSchemaSha256: PIN,
      }),
    ]);
    expect(triage).toMatchObject({
      topic: 'abada:agent',
      priority: 0,
      model: 'gemini-3.6-flash',
      fallbackModels: ['gpt-4.1-mini'],
      inputs: { customerId: '${customerId}', message: '${message}' },
      resultVariable: 'triage',
      outputSchema: { type: 'object', required: ['ticketId', 'priority'] },
      confidenceThreshold: 80,
      maxAttempts: 3,
      limits: { maxTurns: 12, maxTokensTotal: 60000, budgetUsd: 0.5 },
      onInvalidOutput: 'review',
      onLowConfidence: 'review',
    });
    expect(p.nodes[1]).toEqual({
      id: 'notify_customer',
      type: 'service',
      next: 'done',
      topic: 'notify',
      priority: 0,
      maxAttempts: 3,
    });
    expect(p.nodes[2]).toEqual({
      id: 'review',
      type: 'user_task',
      next: 'done',
      candidateGroups: ['support'],
    });
  });

  it('rejects the literal "..." placeholder of the SPEC as a schema pin', () => {
    const errors = errorsOf(SPEC_EXAMPLE.replace(PIN, '...'));
    expect(errors.map((e) => [e.code, e.line])).toEqual([['ABADA-APL-TOOL-007', 14]]);
  });
});

describe('APL narrowing', () => {
  const servers = `kind: ToolServer
name: pay
transport: streamable-http
url: https://pay.example/mcp
tools:
  quote: { policy: read }
  charge: { policy: write, approvers: [ops] }
  payout:
    policy: approval_required
    approvers: [finance]
    approval_sla_hours: 8
    editable: true
    redact: [card.number, "items[].iban"]
    approval: [{ when: "amount > 1000", levels: [finance, [cfo, ceo]] }]
---
`;
  const bindingsOf = (tools: string, context = ctx()) =>
    (deploy(servers + processWith({ tools }), context).processes[0].nodes[0] as AgentNode).bindings;

  it('tightens read → write and write → approval_required, keeps SLA, replaces approvers', () => {
    const b = bindingsOf(
      '      - { ref: pay/quote, policy: write }\n      - { ref: pay/charge, policy: approval_required, approval_sla_hours: 2 }\n      - { ref: pay/payout, approvers: [treasury] }',
    );
    expect(b.map((x) => [x.ref, x.policy, x.approvers, x.approvalSlaHours])).toEqual([
      ['pay/quote', 'write', [], null],
      ['pay/charge', 'approval_required', ['ops'], 2],
      ['pay/payout', 'approval_required', ['treasury'], 8],
    ]);
    expect(b[2]).toMatchObject({
      editable: true,
      redact: ['card.number', 'items[].iban'],
      approvalRules: [{ when: 'amount > 1000', levels: [['finance'], ['cfo', 'ceo']] }],
      idempotency: 'none',
    });
  });

  it('keeping the same policy is allowed', () => {
    expect(bindingsOf('      - { ref: pay/charge, policy: write }')[0].policy).toBe('write');
  });

  it('resolves deployed servers from the context (stdio), and the source overrides them', () => {
    const context = ctx({ toolServers: new Map([['billing', deployedServer()]]) });
    const b = bindingsOf('      - billing/charge', context)[0];
    expect(b).toEqual({
      ref: 'billing/charge',
      server: 'billing',
      tool: 'charge',
      policy: 'write',
      idempotency: 'key',
      transport: 'stdio',
      url: '',
      command: 'npx',
      args: ['billing-mcp'],
      env: { MODE: 'prod' },
      credential: 'billing-key',
      credentialEnv: 'BILLING_KEY',
      inputSchemaSha256: null,
      approvers: [],
      approvalSlaHours: null,
      editable: false,
      redact: ['card.number'],
      approvalRules: [],
      validate: [],
      inputSchema: null,
      ...SETTING_DEFAULTS,
    });
    const override = `kind: ToolServer\nname: billing\ntransport: streamable-http\nurl: http://b/mcp\ntools:\n  charge: { policy: read }\n---\n`;
    const d = deploy(override + processWith({ tools: '      - billing/charge' }), context);
    expect((d.processes[0].nodes[0] as AgentNode).bindings[0]).toMatchObject({
      transport: 'streamable-http',
      url: 'http://b/mcp',
      policy: 'read',
    });
  });

  it('freezes delegate bindings, to deployed or same-source processes', () => {
    const child = `kind: Process\nkey: kyc\nstart: e\nnodes: [{ id: e, type: end }]\n---\n`;
    const d = deploy(
      child + processWith({ tools: '      - delegate:kyc\n      - delegate:old-one' }),
      ctx({ processKeys: new Set(['old-one']) }),
    );
    const b = (d.processes[1].nodes[0] as AgentNode).bindings;
    expect(b[0]).toEqual({
      ref: 'delegate:kyc',
      server: 'delegate',
      tool: 'kyc',
      policy: 'write',
      idempotency: 'key',
      transport: 'delegate',
      url: '',
      command: null,
      args: [],
      env: {},
      credential: null,
      credentialEnv: null,
      inputSchemaSha256: null,
      approvers: [],
      approvalSlaHours: null,
      editable: false,
      redact: [],
      approvalRules: [],
      validate: [],
      inputSchema: null,
      ...SETTING_DEFAULTS,
    });
    expect(b[1].tool).toBe('old-one');
  });

  it('applies defaults: topic, priority, max_attempts, idempotency none', () => {
    const d = deploy(processWith({ agentExtra: '    topic: fast\n    priority: 5\n' }));
    expect(d.processes[0].nodes[0]).toMatchObject({
      topic: 'fast',
      priority: 5,
      maxAttempts: 3,
      bindings: [],
    });
    const s = deploy(
      'kind: Process\nkey: s\nstart: a\nnodes:\n  - { id: a, type: service, topic: t, next: b }\n  - { id: b, type: end }\n',
    );
    expect(s.processes[0].nodes[0]).toMatchObject({ maxAttempts: 3, priority: 0 });
  });

  it('allows models and tools inside the allow lists (server names or exact refs)', () => {
    const context = ctx({ allowedModels: ['m1'], allowedTools: ['pay/quote', 'pay/charge'] });
    expect(bindingsOf('      - pay/quote\n      - pay/charge', context)).toHaveLength(2);
  });

  it('accepts ${result_variable} of another node and outputs naming it', () => {
    const src = processWith({ agentExtra: '    inputs: { prev: "${out.answer}" }\n' }).replace(
      'key: p1',
      'key: p1\noutputs: [out, amount]',
    );
    expect(errorsOf(src)).toEqual([]);
  });
});
