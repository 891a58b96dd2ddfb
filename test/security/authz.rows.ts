/**
 * The rows of the authorization matrix (authz.matrix.test.ts): for every Query, Mutation and Subscription
 * field, the operation that calls it and the outcome expected for each caller.
 *   A = allowed (no UNAUTHENTICATED / FORBIDDEN), D = refused (UNAUTHENTICATED or FORBIDDEN),
 *   N = invisible (null or NOT_FOUND: other projects' ids never reveal existence).
 */
export type Who = 'anon' | 'worker' | 'humanIn' | 'humanOut' | 'admin' | 'other';
export const WHO: Who[] = ['anon', 'worker', 'humanIn', 'humanOut', 'admin', 'other'];
export type Row = {
  op: (ids: Ids) => { query: string; variables?: Record<string, unknown> };
  expect: string;
};
export interface Ids {
  instanceId: string;
  taskId: string;
  approvalId: string;
  digest: string;
  incidentId: string;
  userTaskId: string;
  /** a human of the default project, for updatePrincipal and rotatePrincipalToken */
  principalId: string;
  /** another one, for disablePrincipal */
  disableId: string;
}

const EVIDENCE =
  'query($id: ID!) { approval(id: $id) { id facts toolDescription impact onApproval basis { modelText } } }';
// expect: one letter per caller, in the order of WHO.
export const MATRIX: Record<string, Record<string, Row>> = {
  Query: {
    me: { op: () => ({ query: '{ me { id } }' }), expect: 'DAAAAA' },
    definitions: { op: () => ({ query: '{ definitions { id } }' }), expect: 'DAAAAA' },
    toolServers: { op: () => ({ query: '{ toolServers { id } }' }), expect: 'DAAAAA' },
    processInstance: {
      op: (i) => ({
        query: 'query($id: ID!) { processInstance(id: $id) { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DAAAAN',
    },
    processInstances: { op: () => ({ query: '{ processInstances { totalCount } }' }), expect: 'DAAAAA' },
    externalTask: {
      op: (i) => ({ query: 'query($id: ID!) { externalTask(id: $id) { id } }', variables: { id: i.taskId } }),
      expect: 'DAAAAN',
    },
    approvals: { op: () => ({ query: '{ approvals { totalCount } }' }), expect: 'DDAAAA' },
    // the evidence (SPEC §11) is the approval's: whoever may not see the approval sees none of it
    approval: { op: (i) => ({ query: EVIDENCE, variables: { id: i.approvalId } }), expect: 'DNANAN' },
    incidents: { op: () => ({ query: '{ incidents { totalCount } }' }), expect: 'DAAAAA' },
    incident: {
      op: (i) => ({ query: 'query($id: ID!) { incident(id: $id) { id } }', variables: { id: i.incidentId } }),
      expect: 'DAAAAN',
    },
    modelPrices: { op: () => ({ query: '{ modelPrices { model } }' }), expect: 'DAAAAA' },
    // admins and people of the project; no step holds this key, so whoever may ask reads null
    stepByIdempotencyKey: {
      op: () => ({ query: '{ stepByIdempotencyKey(key: "abada-authz-none") { taskId } }' }),
      expect: 'DDNNNN',
    },
    eventCursor: { op: () => ({ query: '{ eventCursor }' }), expect: 'DAAAAA' },
    principals: { op: () => ({ query: '{ principals { totalCount } }' }), expect: 'DDDDAA' },
    workers: { op: () => ({ query: '{ workers { workerId } }' }), expect: 'DAAAAA' },
    toolCredential: {
      op: (i) => ({
        query: 'query($t: ID!) { toolCredential(taskId: $t, server: "crm", workerId: "nobody") { secret } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    webhookSubscriptions: { op: () => ({ query: '{ webhookSubscriptions { id } }' }), expect: 'DDDDAA' },
    dailyStats: { op: () => ({ query: '{ dailyStats { from approvals { opened } } }' }), expect: 'DDAAAA' },
    webhookDeliveries: { op: () => ({ query: '{ webhookDeliveries { id } }' }), expect: 'DDDDAA' },
    verifyAudit: {
      op: (i) => ({
        query: 'query($id: ID!) { verifyAudit(processInstanceId: $id) { valid } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DAAAAN',
    },
  },
  Mutation: {
    createPrincipal: {
      op: () => ({ query: 'mutation { createPrincipal(input: {kind: HUMAN, name: "x"}) { token } }' }),
      expect: 'DDDDAA',
    },
    // another project's admin does not see the default project's principals → NOT_FOUND
    updatePrincipal: {
      op: (i) => ({
        query: 'mutation($id: ID!) { updatePrincipal(input: {id: $id, groups: ["support"]}) { id } }',
        variables: { id: i.principalId },
      }),
      expect: 'DDDDAN',
    },
    disablePrincipal: {
      op: (i) => ({
        query: 'mutation($id: ID!) { disablePrincipal(id: $id) { id } }',
        variables: { id: i.disableId },
      }),
      expect: 'DDDDAN',
    },
    rotatePrincipalToken: {
      op: (i) => ({
        query: 'mutation($id: ID!) { rotatePrincipalToken(id: $id) { token } }',
        variables: { id: i.principalId },
      }),
      expect: 'DDDDAN',
    },
    deploy: {
      op: () => ({ query: 'mutation { deploy(source: "kind: Nope") { definitions { id } } }' }),
      expect: 'DDDDAA',
    },
    setCredential: {
      op: () => ({ query: 'mutation { setCredential(name: "n", secret: "s") }' }),
      expect: 'DDDDAA',
    },
    // other project: support-triage is not deployed there → NOT_FOUND
    startProcess: {
      op: () => ({
        query: 'mutation { startProcess(key: "support-triage", variables: {customerId: "C-1"}) { id } }',
      }),
      expect: 'DDAAAN',
    },
    cancelProcess: {
      op: (i) => ({
        query: 'mutation($id: ID!) { cancelProcess(id: $id, reason: "r") { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DDDDAN',
    },
    suspendProcess: {
      op: (i) => ({
        query: 'mutation($id: ID!) { suspendProcess(id: $id) { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DDDDAN',
    },
    resumeProcess: {
      op: (i) => ({
        query: 'mutation($id: ID!) { resumeProcess(id: $id) { id } }',
        variables: { id: i.instanceId },
      }),
      expect: 'DDDDAN',
    },
    registerWorker: {
      op: () => ({
        query: 'mutation { registerWorker(input: {workerId: "m", topics: ["abada:agent"]}) { workerId } }',
      }),
      expect: 'DADDDD',
    },
    fetchAndLock: {
      op: () => ({
        query:
          'mutation { fetchAndLock(input: {workerId: "m", maxTasks: 1, topics: [{topicName: "notify", lockDurationMs: 1000}]}) { id } }',
      }),
      expect: 'DADDDD',
    },
    extendLock: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { extendLock(input: {taskId: $t, workerId: "m", lockDurationMs: 1000}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    journalStep: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { journalStep(input: {taskId: $t, workerId: "m", attempt: 1, sequence: 1, kind: MODEL_CALL, state: STARTED, model: "x", request: {}}) { reused } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    journalSteps: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { journalSteps(input: {taskId: $t, workerId: "m", attempt: 1, steps: [{sequence: 1, kind: MODEL_CALL, state: STARTED, model: "x", request: {}}]}) { reused } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    journalBatch: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { journalBatch(input: {workerId: "m", entries: [{taskId: $t, attempt: 1, steps: [{sequence: 1, kind: MODEL_CALL, state: STARTED, model: "x", request: {}}]}]}) { taskId results { reused } } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    completeTask: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { completeTask(input: {taskId: $t, workerId: "m", attempt: 1, variables: {}, metadata: {}}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    failTask: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { failTask(input: {taskId: $t, workerId: "m", attempt: 1, errorType: "X"}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    deferTask: {
      op: (i) => ({
        query:
          'mutation($t: ID!) { deferTask(input: {taskId: $t, workerId: "m", attempt: 1, reason: "matrix", retryAfterMs: 0}) { id } }',
        variables: { t: i.taskId },
      }),
      expect: 'DADDDD',
    },
    decideApproval: {
      op: (i) => ({
        query:
          'mutation($a: ID!, $d: String!) { decideApproval(input: {approvalId: $a, decision: REJECT, comment: "matrix", digest: $d}) { id } }',
        variables: { a: i.approvalId, d: i.digest },
      }),
      // a worker or this project's admin is refused (and the attempt recorded, SPEC §14.5); another
      // project's admin does not learn the approval exists
      expect: 'DDADDN',
    },
    revokeApproval: {
      op: (i) => ({
        query: 'mutation($a: ID!) { revokeApproval(input: {approvalId: $a, comment: "matrix"}) { id } }',
        variables: { a: i.approvalId },
      }),
      // only a person who decided it (none has, here) or an admin: the candidate human is refused too
      expect: 'DDDDAN',
    },
    resolveIncident: {
      op: (i) => ({
        query: 'mutation($id: ID!) { resolveIncident(input: {id: $id, comment: "checked"}) { id } }',
        variables: { id: i.incidentId },
      }),
      expect: 'DDAAAN',
    },
    completeUserTask: {
      op: (i) => ({
        query: 'mutation($id: ID!) { completeUserTask(id: $id) { id } }',
        variables: { id: i.userTaskId },
      }),
      expect: 'DDADAN',
    },
    createWebhookSubscription: {
      op: () => ({
        query:
          'mutation { createWebhookSubscription(input: {url: "http://127.0.0.1:9/hook", events: ["approval.opened"]}) { secret } }',
      }),
      expect: 'DDDDAA',
    },
    rotateWebhookSecret: {
      op: () => ({
        query:
          'mutation { rotateWebhookSecret(input: {id: "00000000-0000-0000-0000-000000000000"}) { secret } }',
      }),
      expect: 'DDDDNN',
    },
    deleteWebhookSubscription: {
      op: () => ({
        query: 'mutation { deleteWebhookSubscription(id: "00000000-0000-0000-0000-000000000000") }',
      }),
      expect: 'DDDDNN',
    },
    retryTask: {
      op: (i) => ({ query: 'mutation($id: ID!) { retryTask(id: $id) { id } }', variables: { id: i.taskId } }),
      expect: 'DDDDAN',
    },
    // prices are engine-wide: any admin sets them
    setModelPrice: {
      op: () => ({
        query:
          'mutation { setModelPrice(input: { model: "authz-model", inputUsdPerMTok: 1, outputUsdPerMTok: 2 }) { model } }',
      }),
      expect: 'DDDDAA',
    },
  },
  Subscription: {
    approvalOpened: { op: () => ({ query: 'subscription { approvalOpened { id } }' }), expect: 'DAAAAA' },
    approvalChanged: { op: () => ({ query: 'subscription { approvalChanged { id } }' }), expect: 'DAAAAA' },
    taskChanged: { op: () => ({ query: 'subscription { taskChanged { id } }' }), expect: 'DAAAAA' },
    incidentOpened: { op: () => ({ query: 'subscription { incidentOpened { id } }' }), expect: 'DAAAAA' },
  },
};
