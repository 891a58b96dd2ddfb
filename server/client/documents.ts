/**
 * The GraphQL documents Node callers send, typed from schema.graphql: the worker's types are their results
 * (`ResultOf<typeof FetchAndLock>`), following the schema instead of copying the engine's.
 */
import { graphql } from './graphql.js';

/** Every field of a step the worker reads back to rebuild its conversation. */
export const StepFields = graphql(`
  fragment StepFields on Step {
    attempt sequence kind state toolRef model request response error digest idempotencyKey
    comment reused usage approvalId purpose reconciled
  }
`);

export const ToolBindingFields = graphql(`
  fragment ToolBindingFields on ToolBinding {
    ref server tool policy idempotency transport url command args credential credentialEnv
    inputSchemaSha256 editable redact
    precondition { tool arguments expression }
    lookup { tool arguments expression }
  }
`);

export const AgentWorkFields = graphql(
  `
  fragment AgentWorkFields on AgentWork {
    profileVersion model fallbackModels prompt inputs resultVariable outputSchema confidenceThreshold
    limits { maxTurns maxTokensTotal budgetUsd }
    toolBindings { ...ToolBindingFields }
  }
`,
  [ToolBindingFields],
);

export const RegisterWorker = graphql(`
  mutation RegisterWorker($input: RegisterWorkerInput!) { registerWorker(input: $input) { workerId health } }
`);

export const FetchAndLock = graphql(
  `
  mutation FetchAndLock($input: FetchAndLockInput!) {
    fetchAndLock(input: $input) {
      id topicName projectId processInstanceId nodeId attempt lockExpiresAt variables
      agentWork { ...AgentWorkFields }
      steps { ...StepFields }
      traceparent
    }
  }
`,
  [AgentWorkFields, StepFields],
);

export const ExtendLock = graphql(`
  mutation ExtendLock($input: ExtendLockInput!) { extendLock(input: $input) { id lockExpiresAt } }
`);

const JournalResultFields = graphql(
  `
  fragment JournalResultFields on JournalResult {
    idempotencyKey reused taskState step { ...StepFields }
  }
`,
  [StepFields],
);

export const JournalStep = graphql(
  `
  mutation JournalStep($input: JournalStepInput!) { journalStep(input: $input) { ...JournalResultFields } }
`,
  [JournalResultFields],
);

export const JournalSteps = graphql(
  `
  mutation JournalSteps($input: JournalStepsInput!) { journalSteps(input: $input) { ...JournalResultFields } }
`,
  [JournalResultFields],
);

export const JournalBatch = graphql(
  `
  mutation JournalBatch($input: JournalBatchInput!) {
    journalBatch(input: $input) { taskId attempt results { ...JournalResultFields } }
  }
`,
  [JournalResultFields],
);

export const CompleteTask = graphql(`
  mutation CompleteTask($input: CompleteTaskInput!) { completeTask(input: $input) { id state attempt } }
`);

export const FailTask = graphql(`
  mutation FailTask($input: FailTaskInput!) { failTask(input: $input) { id state attempt } }
`);

export const DeferTask = graphql(`
  mutation DeferTask($input: DeferTaskInput!) {
    deferTask(input: $input) { id state attempt availableAt errorType }
  }
`);

export const ToolCredential = graphql(`
  query ToolCredential($taskId: ID!, $server: String!, $workerId: String!) {
    toolCredential(taskId: $taskId, server: $server, workerId: $workerId) { server name secret env }
  }
`);

// ---- set-up: the demo, the CLI (whose --json prints these selections) and the test harness ----------

export const Me = graphql(`query Me { me { id name kind groups projectId } }`);

export const CreatePrincipal = graphql(`
  mutation CreatePrincipal($input: CreatePrincipalInput!) {
    createPrincipal(input: $input) { token principal { id kind name projectId groups topics } }
  }
`);

export const Deploy = graphql(`
  mutation Deploy($source: String!) {
    deploy(source: $source) { definitions { id key version } toolServers { name version } }
  }
`);

export const SetCredential = graphql(`
  mutation SetCredential($name: String!, $secret: String!) { setCredential(name: $name, secret: $secret) }
`);

export const StartProcess = graphql(`
  mutation StartProcess($key: String!, $variables: JSON, $businessKey: String) {
    startProcess(key: $key, variables: $variables, businessKey: $businessKey) { id key state currentNodeId }
  }
`);

// ---- approvals and incidents, for integrators (docs/custom-worker.md) --------------------------------

export const ApprovalFields = graphql(`
  fragment ApprovalFields on Approval {
    id state toolRef nodeId model attempt sequence arguments digest candidateGroups level levels
    escalated slaDueAt expiresAt decidedBy decidedAt comment processInstanceId taskId createdAt
    eventCursor
  }
`);

export const IncidentFields = graphql(`
  fragment IncidentFields on Incident {
    id type state message processInstanceId taskId attempt workerId createdAt eventCursor
  }
`);

export const PendingApprovals = graphql(
  `
  query PendingApprovals($mine: Boolean, $first: Int, $after: String) {
    approvals(state: PENDING, mine: $mine, first: $first, after: $after) {
      totalCount
      edges { node { ...ApprovalFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
`,
  [ApprovalFields],
);

export const DecideApproval = graphql(
  `
  mutation DecideApproval($input: DecideApprovalInput!) { decideApproval(input: $input) { ...ApprovalFields } }
`,
  [ApprovalFields],
);

export const ApprovalOpened = graphql(
  `
  subscription ApprovalOpened($after: String) { approvalOpened(after: $after) { ...ApprovalFields } }
`,
  [ApprovalFields],
);

export const ApprovalChanged = graphql(
  `
  subscription ApprovalChanged($after: String) { approvalChanged(after: $after) { ...ApprovalFields } }
`,
  [ApprovalFields],
);

export const IncidentOpened = graphql(
  `
  subscription IncidentOpened($after: String) { incidentOpened(after: $after) { ...IncidentFields } }
`,
  [IncidentFields],
);
