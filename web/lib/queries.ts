/** Every GraphQL document the dashboard sends, typed from schema.graphql. */
import { graphql } from './graphql';

export const MeQuery = graphql(`query Me { me { id name kind groups projectId } }`);

export const ApprovalRow = graphql(`
  fragment ApprovalRow on Approval {
    id state server tool toolRef nodeId attempt sequence candidateGroups escalated slaDueAt
    createdAt decidedBy decidedAt processInstanceId processKey arguments impact risk reversible expiresAt
  }
`);

export const ApprovalsQuery = graphql(
  `query Approvals($state: ApprovalState, $mine: Boolean, $first: Int, $after: String) {
    approvals(state: $state, mine: $mine, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { ...ApprovalRow } }
    }
  }`,
  [ApprovalRow],
);

export const ApprovalOpened = graphql(
  `subscription ApprovalOpened { approvalOpened { ...ApprovalRow } }`,
  [ApprovalRow],
);

export const ApprovalChanged = graphql(
  `subscription ApprovalChanged { approvalChanged { id state escalated decidedBy decidedAt comment } }`,
);

export const ApprovalQuery = graphql(`
  query Approval($id: ID!) {
    approval(id: $id) {
      id state server tool toolRef nodeId model attempt sequence arguments redactedPaths digest
      candidateGroups escalated slaDueAt createdAt decidedBy decidedAt comment editable level levels
      processInstanceId processKey taskId version onApproval impact reversible risk expiresAt validUntil voidReason
      toolDescription facts
      basis { inputs modelText redactedPaths priorCalls { sequence toolRef arguments response error state } }
      earlierProposals { approvalId attempt sequence digest state createdAt changes { path before after } }
      rule { index when auto deny levels { groups } }
      versions { version digest arguments editedBy createdAt changes { path before after } }
      decisions { id action decision outcome decidedBy at comment digest editedDigest level version }
    }
  }
`);

export const ProcessKeyQuery = graphql(`
  query ProcessKey($id: ID!) { processInstance(id: $id) { id key version state businessKey } }
`);

export const DecideMutation = graphql(`
  mutation Decide($input: DecideApprovalInput!) {
    decideApproval(input: $input) { id state decidedBy decidedAt comment digest version level }
  }
`);

export const RevokeMutation = graphql(`
  mutation Revoke($input: RevokeApprovalInput!) {
    revokeApproval(input: $input) { id state comment }
  }
`);

export const InstancesQuery = graphql(`
  query Instances($state: InstanceState, $first: Int, $after: String) {
    processInstances(state: $state, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id key version state currentNodeId businessKey createdAt endedAt } }
    }
  }
`);

export const InstanceQuery = graphql(`
  query Instance($id: ID!) {
    processInstance(id: $id) {
      id key version state currentNodeId businessKey variables createdAt endedAt parentTaskId
      history { seq eventType actor at taskId attempt sequence approvalId incidentId data hash }
      tasks {
        id state nodeId nodeType topicName attempt maxAttempts workerId lockExpiresAt errorType errorMessage
        steps {
          attempt sequence kind state toolRef model idempotencyKey reused usage costUsd comment error
          digest approvalId request response createdAt updatedAt purpose reconciled
        }
      }
    }
    verifyAudit(processInstanceId: $id) { valid rows firstBrokenSeq reason headHash }
  }
`);

export const TaskChanged = graphql(`
  subscription TaskChanged($id: ID) { taskChanged(processInstanceId: $id) { id state attempt } }
`);

export const IncidentsQuery = graphql(`
  query Incidents($state: IncidentState, $first: Int, $after: String) {
    incidents(state: $state, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges {
        node {
          id type state message processInstanceId taskId attempt sequence workerId createdAt resolvedAt resolution
          count lastSeenAt
        }
      }
    }
  }
`);

export const ResolveIncident = graphql(`
  mutation ResolveIncident($input: ResolveIncidentInput!) {
    resolveIncident(input: $input) { id state resolvedAt resolution }
  }
`);

export const IncidentOpened = graphql(`subscription IncidentOpened { incidentOpened { id type } }`);

export const WorkersQuery = graphql(`
  query Workers {
    workers {
      workerId health lastHeartbeatAt lastRejectionAt lastRejectionReason consecutiveFailures topics models
    }
  }
`);

export const DefinitionsQuery = graphql(`
  query Definitions {
    definitions { id key version deployedAt sourceSha256 spec bindings { nodeId bindings {
      ref policy idempotency approvers approvalSlaHours transport url credential inputSchemaSha256 redact editable
    } } }
    toolServers { id name version transport url credential updatedAt }
  }
`);

export const DeployMutation = graphql(`
  mutation Deploy($source: String!) {
    deploy(source: $source) { definitions { id key version } toolServers { name version } }
  }
`);

export const PrincipalRow = graphql(`
  fragment PrincipalRow on Principal { id kind name projectId groups topics disabled disabledAt createdAt }
`);

export const PrincipalsQuery = graphql(
  `query Principals($kind: PrincipalKind, $first: Int, $after: String) {
    principals(kind: $kind, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { ...PrincipalRow } }
    }
  }`,
  [PrincipalRow],
);

export const UpdatePrincipalMutation = graphql(
  `mutation UpdatePrincipal($input: UpdatePrincipalInput!) { updatePrincipal(input: $input) { ...PrincipalRow } }`,
  [PrincipalRow],
);

export const DisablePrincipalMutation = graphql(
  `mutation DisablePrincipal($id: ID!) { disablePrincipal(id: $id) { ...PrincipalRow } }`,
  [PrincipalRow],
);

export const RotatePrincipalTokenMutation = graphql(
  `mutation RotatePrincipalToken($id: ID!) { rotatePrincipalToken(id: $id) { token principal { ...PrincipalRow } } }`,
  [PrincipalRow],
);

export const DailyStatsQuery = graphql(`
  query DailyStats($days: Int) {
    dailyStats(days: $days) {
      from to
      approvals { day opened decided medianDecisionSeconds }
      modelCost { day model costUsd inputTokens outputTokens }
      incidents { day opened }
    }
  }
`);

export const NeedsMeQuery = graphql(`
  query NeedsMe {
    approvals(state: PENDING, mine: true, first: 5) {
      totalCount
      edges { node { id server tool impact risk slaDueAt processInstanceId } }
    }
    incidents(state: OPEN, first: 5) { totalCount edges { node { id type message createdAt processInstanceId } } }
    workers { workerId health consecutiveFailures lastRejectionReason }
  }
`);

export const MyPendingCount = graphql(`query MyPendingCount { approvals(state: PENDING, mine: true, first: 1) { totalCount } }`);

export const DefinitionSpecQuery = graphql(`
  query DefinitionSpec($key: String!) { definitions(key: $key) { id version spec } }
`);
