/**
 * Shared setup for the approval tests: a `pay` ToolServer whose tools exercise every approval feature
 * (conditional levels, redaction, editable arguments, idempotency none), a process per test on its own
 * topic (so tests sharing a database never take each other's tasks), and the GraphQL documents.
 */
import { graphql, type ResultOf } from '../../../server/client/index.js';
import type { GqlResult, TestEngine } from '../../helpers/engine.js';
import { Q } from '../../helpers/fixtures.js';
import type { Locked, WorkerSim } from '../../helpers/worker-sim.js';

export const PAY_SERVER = `
kind: ToolServer
name: pay
transport: streamable-http
url: http://127.0.0.1:4199/mcp
tools:
  lookup: { policy: read }
  refund:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    approval_sla_hours: 4
    approval: [{ when: "amount > 1000", levels: [finance, finance-leads] }]
  charge:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    redact: [card.number]
  adjust:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    editable: true
    redact: [iban]
    approval: [{ when: "amount > 1000", levels: [finance, finance-leads] }]
  payout:
    policy: approval_required
    idempotency: key
    approvers: [finance]
    approval:
      - { when: "amount > 100", levels: [cfo] }
      - { when: "amount > 10000", levels: [finance, cfo] }
  wire:
    policy: approval_required
    idempotency: none
    approvers: [finance]
`;

/** An agent process on its own topic binding every `pay` tool. */
export const payProcess = (key: string) => `
kind: Process
key: ${key}
variables: { customerId: { type: string } }
start: work
nodes:
  - id: work
    type: agent
    topic: ${key}
    model: gemini-3.6-flash
    fallback_models: [gpt-4.1-mini]
    prompt: Settle the customer's request.
    tools: [pay/lookup, pay/refund, pay/charge, pay/adjust, pay/payout, pay/wire]
    result_variable: outcome
    max_attempts: 3
    next: done
  - { id: done, type: end }
`;

export const D = {
  approval:
    graphql(`query($id: ID!) { approval(id: $id) { id state processKey toolRef server tool nodeId model attempt sequence proposalVersion
    arguments redactedPaths digest editable candidateGroups level levels escalated slaDueAt decidedBy decidedAt
    comment processInstanceId taskId
    decisions { level decidedBy decision digest editedDigest comment outcome }
    earlierProposals { approvalId attempt sequence state digest changes { path before after } } } }`),
  approvals: graphql(`query($state: ApprovalState, $mine: Boolean, $first: Int, $after: String) {
    approvals(state: $state, mine: $mine, first: $first, after: $after) {
      totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id state toolRef candidateGroups } } } }`),
  decide: graphql(`mutation($input: DecideApprovalInput!) { decideApproval(input: $input) {
    id state decidedBy decidedAt comment digest level levels candidateGroups arguments } }`),
  journal: graphql(`mutation($input: JournalStepInput!) { journalStep(input: $input) {
    idempotencyKey reused taskState step { sequence state digest idempotencyKey reused comment approvalId request } } }`),
  task: graphql(`query($id: ID!) { externalTask(id: $id) { id state attempt workerId lockExpiresAt errorType
    steps { attempt sequence state toolRef digest idempotencyKey comment reused approvalId request } } }`),
  history: graphql(`query($id: ID!) { processInstance(id: $id) { id state currentNodeId
    history { seq row eventType actor at taskId attempt sequence approvalId data } } }`),
  cancel: graphql(`mutation($id: ID!, $r: String!) { cancelProcess(id: $id, reason: $r) { id state } }`),
};

export type Journaled = ResultOf<typeof D.journal>['journalStep'];

/** journalStep for a TOOL_CALL, raw (errors are returned, not thrown). */
export function toolRaw(
  w: WorkerSim,
  task: { id: string; attempt: number },
  sequence: number,
  toolRef: string,
  state: string,
  args: Record<string, unknown>,
  response?: unknown,
): Promise<GqlResult<ResultOf<typeof D.journal>>> {
  return w.engine.gql(w.token, D.journal, {
    input: {
      taskId: task.id,
      workerId: w.workerId,
      attempt: task.attempt,
      sequence,
      kind: 'TOOL_CALL',
      state,
      toolRef,
      request: { callId: `call_${sequence}`, arguments: args },
      response,
    },
  });
}

export async function tool(...a: Parameters<typeof toolRaw>): Promise<Journaled> {
  const r = await toolRaw(...a);
  if (r.errors?.length) throw new Error(`journal ${a[2]}: ${JSON.stringify(r.errors)}`);
  return r.data!.journalStep;
}

export function decide(
  engine: TestEngine,
  token: string | null,
  input: {
    approvalId: string;
    decision: 'APPROVE' | 'REJECT';
    digest: string;
    comment?: string;
    arguments?: unknown;
  },
) {
  return engine.gql(token, D.decide, { input });
}

export async function deployPay(engine: TestEngine, keys: string[]) {
  await engine.ok(engine.adminToken, Q.deploy, { s: [PAY_SERVER, ...keys.map(payProcess)].join('---') });
}

export interface Proposed {
  instanceId: string;
  task: Locked;
  approvalId: string;
  digest: string;
  journaled: Journaled;
}

/** Starts `key` (as `starter`), takes its task and proposes `toolRef(args)` as step 1. */
export async function startAndPropose(
  w: WorkerSim,
  key: string,
  toolRef: string,
  args: Record<string, unknown>,
  starter = w.engine.adminToken,
): Promise<Proposed> {
  const started = await w.engine.ok(starter, Q.start, { key, v: { customerId: 'C-42' } });
  const task = await w.fetchOne({ topic: key });
  const journaled = await tool(w, task, 1, toolRef, 'PROPOSED', args);
  return {
    instanceId: started.startProcess.id,
    task,
    approvalId: journaled.step.approvalId!,
    digest: journaled.step.digest,
    journaled,
  };
}

export async function historyOf(engine: TestEngine, instanceId: string) {
  const d = await engine.ok(engine.adminToken, D.history, { id: instanceId });
  if (!d.processInstance) throw new Error(`no process instance ${instanceId}`);
  return d.processInstance.history;
}

/** The approval as `token` sees it; fails when it sees none. */
export async function approvalOf(engine: TestEngine, token: string, id: string) {
  const { approval } = await engine.ok(token, D.approval, { id });
  if (!approval) throw new Error(`approval ${id} is not visible to this principal`);
  return approval;
}

export async function taskOf(engine: TestEngine, id: string) {
  const { externalTask } = await engine.ok(engine.adminToken, D.task, { id });
  if (!externalTask) throw new Error(`no external task ${id}`);
  return externalTask;
}
