/** The seeds' definitions (the demo's own, so tests and demo tell the same story) and the GraphQL documents a worker sends. */
import { graphql } from '../../server/client/index.js';
import { CRM_SERVER as DEMO_CRM_SERVER } from '../../server/demo/definitions.js';

export { REFUND, SUPPORT_TRIAGE } from '../../server/demo/definitions.js';

/** The CRM ToolServer of seeds 000/002; the url does not need to answer unless a worker calls it. */
export const CRM_SERVER = (url = 'http://127.0.0.1:4100/mcp') => DEMO_CRM_SERVER(url);

/**
 * The documents the engine tests send most, typed from schema.graphql like the client's own: selections of
 * their own (fields a worker never reads, asserted by the tests).
 */
export const Q = {
  deploy: graphql(
    `mutation($s: String!) { deploy(source: $s) { definitions { id key version } toolServers { name version } } }`,
  ),
  start: graphql(
    `mutation($key: String!, $v: JSON) { startProcess(key: $key, variables: $v) { id state currentNodeId } }`,
  ),
  fetch: graphql(`mutation($input: FetchAndLockInput!) { fetchAndLock(input: $input) {
    id topicName projectId processInstanceId nodeId attempt lockExpiresAt variables
    agentWork { model fallbackModels prompt inputs resultVariable limits { maxTurns maxTokensTotal budgetUsd } toolBindings { ref server tool policy idempotency url credential approvers } }
    steps { sequence kind state toolRef digest idempotencyKey reused request response comment }
    earlierWrites { attempt sequence state toolRef digest idempotencyKey response }
  } }`),
  journal: graphql(`mutation($input: JournalStepInput!) { journalStep(input: $input) {
    idempotencyKey reused taskState step { sequence state digest idempotencyKey reused response comment costUsd usage }
  } }`),
  complete: graphql(
    `mutation($input: CompleteTaskInput!) { completeTask(input: $input) { id state attempt } }`,
  ),
  fail: graphql(
    `mutation($input: FailTaskInput!) { failTask(input: $input) { id state attempt errorType } }`,
  ),
  instance: graphql(`query($id: ID!) { processInstance(id: $id) { id state currentNodeId variables
    tasks { id state nodeId attempt topicName steps { attempt sequence kind state toolRef idempotencyKey reused } }
    history { seq row eventType actor taskId attempt sequence data } } }`),
  decide: graphql(
    `mutation($input: DecideApprovalInput!) { decideApproval(input: $input) { id state decidedBy comment digest } }`,
  ),
  approvals: graphql(
    `query($state: ApprovalState) { approvals(state: $state) { totalCount edges { node { id state toolRef digest arguments candidateGroups taskId attempt sequence } } } }`,
  ),
};

/** A JSON value (the schema's JSON scalar, typed unknown) read as an object whose fields a test asserts. */
export const json = (value: unknown) => (value ?? {}) as Record<string, unknown>;

export const topic = (name = 'abada:agent', lockDurationMs = 30_000) => ({ topicName: name, lockDurationMs });
