import { expect } from 'vitest';
import {
  validateSource,
  type AplError,
  type ApprovalSettings,
  type ToolServerSpec,
  type ValidationContext,
} from '../../../server/engine/definitions/testing.js';

export const PIN = 'a'.repeat(64);

/** The approval settings of SPEC §11 as a deployment freezes them when nothing is declared. */
export const SETTING_DEFAULTS: Required<ApprovalSettings> = {
  impact: null,
  reversible: true,
  risk: 'medium',
  approvalValidMinutes: 1440,
  approvalTimeoutHours: null,
  precondition: null,
  lookup: null,
  redactResult: [],
};

/** The SPEC §2 example (the `input_schema_sha256: ...` placeholder replaced by a real 64-hex pin). */
export const SPEC_EXAMPLE = `kind: ToolServer
name: crm
transport: streamable-http
url: http://127.0.0.1:4100/mcp
credential: crm-token            # name of a secret stored (encrypted) in the engine
tools:
  get_customer:  { policy: read }
  create_ticket: { policy: write, idempotency: key }
  refund:
    policy: approval_required
    idempotency: key             # key | none
    approvers: [finance]
    approval_sla_hours: 4
    input_schema_sha256: ${PIN}
---
kind: Process
key: support-triage
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    fallback_models: [gpt-4.1-mini]
    prompt: Read the message from \${customerId}, look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools:
      - crm/get_customer
      - crm/create_ticket
      - { ref: crm/refund, approvers: [finance-leads] }     # replaces the server's approvers for this node
    result_variable: triage
    output_schema: { type: object, required: [ticketId, priority] }
    confidence_threshold: 80
    max_attempts: 3
    limits: { max_turns: 12, max_tokens_total: 60000, budget_usd: 0.50 }
    on_invalid_output: review     # a node id; absent = the attempt fails
    on_low_confidence: review
    next: notify_customer
  - { id: notify_customer, type: service, topic: notify, next: done }   # plain external task
  - { id: review, type: user_task, candidate_groups: [support], next: done }
  - { id: done, type: end }
`;

export function ctx(over: Partial<ValidationContext> = {}): ValidationContext {
  return {
    toolServers: new Map(),
    processKeys: new Set(),
    allowedModels: null,
    allowedTools: null,
    ...over,
  };
}

export function deployedServer(over: Partial<ToolServerSpec> = {}): ToolServerSpec {
  return {
    name: 'billing',
    transport: 'stdio',
    url: null,
    command: 'npx',
    args: ['billing-mcp'],
    env: { MODE: 'prod' },
    credential: 'billing-key',
    credentialEnv: 'BILLING_KEY',
    tools: {
      charge: {
        policy: 'write',
        idempotency: 'key',
        approvers: [],
        approvalSlaHours: null,
        inputSchemaSha256: null,
        editable: false,
        redact: ['card.number'],
        approvalRules: [],
      },
      lookup: {
        policy: 'read',
        idempotency: 'none',
        approvers: [],
        approvalSlaHours: null,
        inputSchemaSha256: null,
        editable: false,
        redact: [],
        approvalRules: [],
      },
    },
    ...over,
  };
}

/** A minimal valid process around one agent node; `tools` and extra agent lines are spliced in. */
export function processWith(opts: { tools?: string; agentExtra?: string; key?: string } = {}): string {
  return `kind: Process
key: ${opts.key ?? 'p1'}
variables: { amount: { type: number } }
start: a
nodes:
  - id: a
    type: agent
    model: m1
    prompt: Handle \${amount}
    result_variable: out
${opts.tools ? `    tools:\n${opts.tools}\n` : ''}${opts.agentExtra ?? ''}    next: done
  - id: done
    type: end
`;
}

export function errorsOf(source: string, context: ValidationContext = ctx()): AplError[] {
  const r = validateSource(source, context);
  if (r.ok) return [];
  return r.errors;
}

/** Asserts exactly one error with `code` exists, on `line`, and returns it. */
export function expectError(
  source: string,
  code: string,
  line: number | null,
  context: ValidationContext = ctx(),
  path?: string,
): AplError {
  const errors = errorsOf(source, context);
  const matching = errors.filter((e) => e.code === code);
  expect(matching, JSON.stringify(errors, null, 1)).toHaveLength(1);
  expect(matching[0].line, JSON.stringify(matching[0])).toBe(line);
  if (path !== undefined) expect(matching[0].path).toBe(path);
  expect(matching[0].message.length).toBeGreaterThan(10);
  return matching[0];
}
