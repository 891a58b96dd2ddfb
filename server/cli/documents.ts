/**
 * The CLI's GraphQL documents (the set-up ones are the client's). Their selections are what `--json`
 * prints, so a field added here is a field added to the CLI's output.
 */
import { graphql } from '../client/index.js';

export const Approvals = graphql(`
  query CliApprovals($state: ApprovalState, $mine: Boolean, $first: Int) {
    approvals(state: $state, mine: $mine, first: $first) {
      totalCount
      edges { node { id state toolRef digest candidateGroups escalated arguments createdAt processInstanceId } }
    }
  }
`);

export const ApprovalDigest = graphql(`
  query CliApprovalDigest($id: ID!) { approval(id: $id) { id digest state toolRef } }
`);

export const DecideApproval = graphql(`
  mutation CliDecideApproval($input: DecideApprovalInput!) {
    decideApproval(input: $input) { id state decidedBy digest comment }
  }
`);

export const RevokeApproval = graphql(`
  mutation CliRevokeApproval($input: RevokeApprovalInput!) {
    revokeApproval(input: $input) { id state comment toolRef }
  }
`);

export const Incidents = graphql(`
  query CliIncidents($state: IncidentState, $first: Int) {
    incidents(state: $state, first: $first) {
      totalCount
      edges { node { id type state message processInstanceId taskId attempt workerId createdAt } }
    }
  }
`);

export const CancelProcess = graphql(`
  mutation CliCancelProcess($id: ID!, $reason: String!) { cancelProcess(id: $id, reason: $reason) { id state } }
`);

export const VerifyAudit = graphql(`
  query CliVerifyAudit($id: ID!) {
    verifyAudit(processInstanceId: $id) { processInstanceId valid rows firstBrokenSeq reason headHash }
  }
`);

export const Principals = graphql(`
  query CliPrincipals($kind: PrincipalKind, $first: Int, $after: String) {
    principals(kind: $kind, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id kind name projectId groups topics disabled disabledAt createdAt } }
    }
  }
`);

export const UpdatePrincipal = graphql(`
  mutation CliUpdatePrincipal($input: UpdatePrincipalInput!) {
    updatePrincipal(input: $input) { id kind name projectId groups topics disabled }
  }
`);

export const DisablePrincipal = graphql(`
  mutation CliDisablePrincipal($id: ID!) {
    disablePrincipal(id: $id) { id kind name projectId disabled disabledAt }
  }
`);

export const RotatePrincipalToken = graphql(`
  mutation CliRotatePrincipalToken($id: ID!) {
    rotatePrincipalToken(id: $id) { token principal { id kind name projectId } }
  }
`);

export const SuspendProcess = graphql(`
  mutation CliSuspendProcess($id: ID!) { suspendProcess(id: $id) { id state currentNodeId } }
`);

export const ResumeProcess = graphql(`
  mutation CliResumeProcess($id: ID!) { resumeProcess(id: $id) { id state currentNodeId } }
`);

export const IncidentById = graphql(`
  query CliIncident($id: ID!) { incident(id: $id) { id type state taskId processInstanceId } }
`);

export const ResolveIncident = graphql(`
  mutation CliResolveIncident($input: ResolveIncidentInput!) {
    resolveIncident(input: $input) { id type state resolution resolvedAt }
  }
`);

export const RetryTask = graphql(`
  mutation CliRetryTask($id: ID!) { retryTask(id: $id) { id state attempt processInstanceId } }
`);

export const SetModelPrice = graphql(`
  mutation CliSetModelPrice($input: SetModelPriceInput!) {
    setModelPrice(input: $input) { model inputUsdPerMTok outputUsdPerMTok validFrom setBy }
  }
`);

export const ModelPrices = graphql(`
  query CliModelPrices($model: String, $history: Boolean) {
    modelPrices(model: $model, history: $history) { model inputUsdPerMTok outputUsdPerMTok validFrom setBy }
  }
`);

export const StepByIdempotencyKey = graphql(`
  query CliStepByIdempotencyKey($key: String!) {
    stepByIdempotencyKey(key: $key) {
      key processInstanceId taskId attempt sequence toolRef outcome
      steps { attempt sequence state reused }
      sends { reason attempt sequence at workerId }
    }
  }
`);
