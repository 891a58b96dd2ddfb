/** The seeds' definitions and the GraphQL documents a worker sends, shared by scenario tests. */
export const CRM_SERVER = (url = 'http://127.0.0.1:4100/mcp') => `
kind: ToolServer
name: crm
transport: streamable-http
url: ${url}
credential: crm-token
tools:
  get_customer:  { policy: read }
  create_ticket: { policy: write, idempotency: key }
  close_ticket:  { policy: write, idempotency: key }
  send_email:    { policy: write, idempotency: none }
  refund:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    approval_sla_hours: 4
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

/** seeds/000: the refund process (node narrows approvers to finance-leads). */
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
      - crm/create_ticket
      - { ref: crm/refund, approvers: [finance-leads] }
    result_variable: outcome
    max_attempts: 3
    next: done
  - { id: done, type: end }
`;

export const Q = {
  deploy: `mutation($s: String!) { deploy(source: $s) { definitions { id key version } toolServers { name version } } }`,
  start: `mutation($key: String!, $v: JSON) { startProcess(key: $key, variables: $v) { id state currentNodeId } }`,
  fetch: `mutation($input: FetchAndLockInput!) { fetchAndLock(input: $input) {
    id topicName projectId processInstanceId nodeId attempt lockExpiresAt variables
    agentWork { model fallbackModels prompt inputs resultVariable limits { maxTurns maxTokensTotal budgetUsd } toolBindings { ref server tool policy idempotency url credential approvers } }
    steps { sequence kind state toolRef digest idempotencyKey reused request response comment }
    earlierWrites { attempt sequence state toolRef digest idempotencyKey response }
  } }`,
  journal: `mutation($input: JournalStepInput!) { journalStep(input: $input) {
    idempotencyKey reused taskState step { sequence state digest idempotencyKey reused response comment costUsd usage }
  } }`,
  complete: `mutation($input: CompleteTaskInput!) { completeTask(input: $input) { id state attempt } }`,
  fail: `mutation($input: FailTaskInput!) { failTask(input: $input) { id state attempt errorType } }`,
  instance: `query($id: ID!) { processInstance(id: $id) { id state currentNodeId variables
    tasks { id state nodeId attempt topicName steps { attempt sequence kind state toolRef idempotencyKey reused } }
    history { seq eventType actor taskId attempt sequence data } } }`,
  decide: `mutation($input: DecideApprovalInput!) { decideApproval(input: $input) { id state decidedBy comment digest } }`,
  approvals: `query($state: ApprovalState) { approvals(state: $state) { totalCount edges { node { id state toolRef digest arguments candidateGroups taskId attempt sequence } } } }`,
};

export const topic = (name = 'abada:agent', lockDurationMs = 30_000) => ({ topicName: name, lockDurationMs });
