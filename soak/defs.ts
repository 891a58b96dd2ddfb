/**
 * The soak's definitions and scripted model. Three processes, all on the demo CRM:
 *  - `soak-triage` (seed 002): get_customer → create_ticket (write, keyed) → JSON;
 *  - `soak-refund` (seed 000): get_customer → refund (approval_required, keyed, finance-leads) → JSON;
 *  - `soak-refund-mail`: the refund, then an e-mail to the customer with `send_email` (write, keyless:
 *    an interrupted one is never re-sent, it becomes a TOOL_OUTCOME_UNKNOWN incident).
 * Every instance carries a tag (`soak-17`) in its message and business key; the e-mail subject carries
 * it too, so the CRM's record of a keyless call can be tied to its instance.
 */
import {
  lastResult,
  parseJson,
  refundScript,
  type Script,
  supportTriageScript,
  textOf,
  userInput,
} from '../server/demo/scripts.js';

export const CRM_SECRET = 'soak-crm-secret';

export const DEFINITIONS = (crmUrl: string) => `
kind: ToolServer
name: crm
transport: streamable-http
url: ${crmUrl}
credential: crm-token
tools:
  get_customer:  { policy: read }
  create_ticket: { policy: write, idempotency: key }
  send_email:    { policy: write, idempotency: none }
  refund:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    approval_sla_hours: 4
---
kind: Process
key: soak-triage
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Read the message from \${customerId}, look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [crm/get_customer, crm/create_ticket]
    result_variable: triage
    output_schema: { type: object, required: [ticketId, priority] }
    confidence_threshold: 80
    max_attempts: 3
    limits: { max_turns: 12, max_tokens_total: 60000 }
    next: done
  - { id: done, type: end }
---
kind: Process
key: soak-refund
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Help \${customerId}; refund a lost parcel if it is due. Answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools:
      - crm/get_customer
      - { ref: crm/refund, approvers: [finance-leads] }
    result_variable: outcome
    max_attempts: 3
    next: done
  - { id: done, type: end }
---
kind: Process
key: soak-refund-mail
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Help \${customerId}; refund a lost parcel if it is due, then e-mail the customer. Answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools:
      - crm/get_customer
      - crm/send_email
      - { ref: crm/refund, approvers: [finance-leads] }
    result_variable: outcome
    max_attempts: 3
    next: done
  - { id: done, type: end }
`;

export type Story = 'soak-triage' | 'soak-refund' | 'soak-refund-mail';

/** The tag of a conversation (`soak-17`), from the message input. */
export function tagOf(text: string | undefined): string {
  return /soak-\d+/.exec(text ?? '')?.[0] ?? 'soak-?';
}

export const mailSubject = (tag: string) => `Your refund (${tag})`;

/** Seed 000 followed by an e-mail (keyless write) once the refund is decided. */
const refundMailScript: Script = (req) => {
  const base = refundScript(req);
  if ('toolCalls' in base || !('content' in base)) return base;
  const tag = tagOf(userInput(req.messages, 'message'));
  const mail = lastResult(req.messages, 'crm__send_email');
  if (!mail) {
    return {
      toolCalls: [
        {
          name: 'crm__send_email',
          arguments: { to: 'alice@example.com', subject: mailSubject(tag), body: base.content },
        },
      ],
    };
  }
  const outcome = parseJson(base.content) ?? {};
  return { content: JSON.stringify({ ...outcome, emailed: mail.content.slice(0, 200) }) };
};

/** Routes by the system and user text: e-mail variant, refund, else support triage. */
export const soakScript: Script = (req) => {
  const text = req.messages
    .filter((m) => m.role === 'system' || m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
  if (/e-mail the customer/i.test(text)) return refundMailScript(req);
  if (/refund/i.test(text)) return refundScript(req);
  return supportTriageScript(req);
};

/** Which story the n-th instance runs: ~50 % triage, ~30 % refund, ~20 % refund + keyless e-mail. */
export function storyFor(n: number): Story {
  const r = n % 10;
  if (r < 5) return 'soak-triage';
  if (r < 8) return 'soak-refund';
  return 'soak-refund-mail';
}

/** A deterministic pseudo-random number in [0, 1) for a string (bots decide by it, reproducibly). */
export function unitHash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0) / 2 ** 32;
}
