/**
 * The demo's definitions: the CRM tool server (seed 000's policies) and the support-triage (seed 002) and
 * refund (seed 000) processes. Tests deploy the same documents (test/helpers/fixtures.ts re-exports them),
 * so the demo and the scenario tests tell the same story.
 */

/** The CRM ToolServer at `url`, with seed 000's refund policies. */
export const CRM_SERVER = (url: string) => `
kind: ToolServer
name: crm
transport: streamable-http
url: ${url}
credential: crm-token
tools:
  get_customer:  { policy: read }
  get_order:     { policy: read }
  find_refund:   { policy: read }
  create_ticket: { policy: write, idempotency: key }
  close_ticket:  { policy: write, idempotency: key }
  send_email:    { policy: write, idempotency: none }
  refund:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    approval_sla_hours: 4
    impact: "Refund \${amount} \${currency} to order \${orderId}"
    reversible: false
    risk: high
    validate:
      - { expect: "amount > 0", message: "a refund amount must be greater than 0" }
    approval:
      - { when: "amount <= 20", auto: true }
      - { when: "amount > 5000", deny: "refunds above 5000 EUR go through the finance desk, not an agent" }
    precondition:
      tool: crm/get_order
      arguments: { orderId: "\${orderId}" }
      expect: "status != 'refunded' && refundedAmount + arguments.amount <= amount"
    lookup:
      tool: crm/find_refund
      arguments: { orderId: "\${orderId}", key: "\${idempotencyKey}" }
      found: "len(refunds) > 0"
`;

/** seeds/002: the support-triage process. */
export const SUPPORT_TRIAGE = `
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
    tools: [crm/get_customer, crm/create_ticket, crm/send_email]
    result_variable: triage
    output_schema: { type: object, required: [ticketId, priority] }
    confidence_threshold: 80
    max_attempts: 3
    limits: { max_turns: 12, max_tokens_total: 60000, budget_usd: 0.50 }
    next: notify_customer
  - { id: notify_customer, type: service, topic: notify, next: done }
  - { id: done, type: end }
`;

/** seeds/000: the refund process (the node narrows the refund's approvers to finance-leads). */
export const REFUND = `
kind: Process
key: refund
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
      - crm/get_order
      - crm/find_refund
      - crm/create_ticket
      - { ref: crm/refund, approvers: [finance-leads] }
    result_variable: outcome
    max_attempts: 3
    next: done
  - { id: done, type: end }
`;

/** Everything the demo deploys, as one multi-document source. */
export const demoSource = (crmUrl: string) => `${CRM_SERVER(crmUrl)}---${SUPPORT_TRIAGE}---${REFUND}`;

/** Alice's lost parcel (seed 000): the agent will propose refunding €89 for order 5531. */
export const ALICE = {
  key: 'refund',
  businessKey: 'alice-5531',
  variables: { customerId: 'C-42', message: 'My parcel 5531 never arrived. Can I get my €89 back?' },
};
