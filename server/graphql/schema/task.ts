import {
  completeTask,
  deferTask,
  failTask,
  extendLease,
  getTask,
  retryTask,
  toolCredential,
  fetchAndLock,
  type LeasedTaskView,
  type TaskView,
} from '../../engine/tasks/index.js';
import type { AgentWork as AgentWorkShape } from '../../engine/definitions/index.js';
import { builder, byId } from '../builder.js';
import { ToolBinding } from './definition.js';
import { attemptFields, BatchStepInput, Step, stepsOf, TaskState } from './step.js';

export const ExternalTask = builder.objectRef<TaskView>('ExternalTask').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    state: t.field({ type: TaskState, resolve: (r) => r.state }),
    topicName: t.exposeString('topicName'),
    nodeId: t.exposeString('nodeId'),
    nodeType: t.exposeString('nodeType'),
    attempt: t.exposeInt('attempt'),
    maxAttempts: t.exposeInt('maxAttempts'),
    deferrals: t.exposeInt('deferrals', {
      description: 'Deferrals (deferTask) on the current attempt; past ABADA_MAX_DEFERRALS one fails it.',
    }),
    priority: t.exposeInt('priority'),
    processInstanceId: t.exposeID('processInstanceId'),
    workerId: t.exposeString('workerId', { nullable: true }),
    lockExpiresAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => r.leaseExpiresAt }),
    availableAt: t.field({ type: 'DateTime', resolve: (r) => r.availableAt }),
    errorType: t.exposeString('errorType', { nullable: true }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    metadata: t.field({ type: 'JSON', nullable: true, resolve: (r) => r.metadata }),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
    steps: t.field({
      type: [Step],
      description: 'The journal, every attempt.',
      resolve: (r, _a, ctx) => ctx.loaders.stepsByTask.load(r.id),
    }),
  }),
});

const AgentLimits = builder.objectRef<AgentWorkShape['limits']>('AgentLimits').implement({
  fields: (t) => ({
    maxTurns: t.exposeInt('maxTurns', { nullable: true }),
    maxTokensTotal: t.exposeInt('maxTokensTotal', { nullable: true }),
    budgetUsd: t.exposeFloat('budgetUsd', { nullable: true }),
  }),
});

const AgentWork = builder.objectRef<AgentWorkShape>('AgentWork').implement({
  fields: (t) => ({
    profileVersion: t.exposeString('profileVersion'),
    model: t.exposeString('model'),
    fallbackModels: t.exposeStringList('fallbackModels'),
    prompt: t.exposeString('prompt'),
    inputs: t.field({ type: 'JSON', resolve: (w) => w.inputs }),
    resultVariable: t.exposeString('resultVariable'),
    outputSchema: t.field({ type: 'JSON', nullable: true, resolve: (w) => w.outputSchema }),
    confidenceThreshold: t.exposeFloat('confidenceThreshold', { nullable: true }),
    limits: t.field({ type: AgentLimits, resolve: (w) => w.limits }),
    toolBindings: t.field({ type: [ToolBinding], resolve: (w) => w.toolBindings }),
  }),
});

const LockedTask = builder.objectRef<LeasedTaskView>('LockedTask').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    topicName: t.exposeString('topicName'),
    projectId: t.exposeID('projectId'),
    processInstanceId: t.exposeID('processInstanceId'),
    nodeId: t.exposeString('nodeId'),
    attempt: t.exposeInt('attempt'),
    lockExpiresAt: t.field({ type: 'DateTime', resolve: (r) => r.leaseExpiresAt }),
    variables: t.field({ type: 'JSON', resolve: (r) => r.variables }),
    agentWork: t.field({ type: AgentWork, nullable: true, resolve: (r) => r.agentWork }),
    steps: t.field({ type: [Step], resolve: (r) => r.steps }),
    earlierWrites: t.field({ type: [Step], resolve: (r) => r.earlierWrites }),
    traceparent: t.exposeString('traceparent', {
      nullable: true,
      description:
        "The W3C traceparent of the instance's trace (null when it started untraced): a worker's spans for this attempt join it.",
    }),
  }),
});

const TopicRequest = builder.inputType('TopicRequest', {
  fields: (t) => ({ topicName: t.string({ required: true }), lockDurationMs: t.int({ required: true }) }),
});

const FetchAndLockInput = builder.inputType('FetchAndLockInput', {
  fields: (t) => ({
    workerId: t.string({ required: true }),
    maxTasks: t.int({ required: true }),
    topics: t.field({ type: [TopicRequest], required: true }),
    asyncResponseTimeoutMs: t.int(),
    projectId: t.id(),
    requestId: t.string({
      description:
        'A fresh id per request, sent again unchanged when no answer came (UNAVAILABLE, a dropped ' +
        'connection): the tasks that request already leased come back instead of new ones.',
    }),
  }),
});

const ExtendLockInput = builder.inputType('ExtendLockInput', {
  fields: (t) => ({
    taskId: t.id({ required: true }),
    workerId: t.string({ required: true }),
    lockDurationMs: t.int({ required: true, description: 'The new lease runs this long from now.' }),
    attempt: t.int(),
  }),
});

const AttemptMetadataInput = builder.inputType('AttemptMetadataInput', {
  fields: (t) => ({
    model: t.string(),
    provider: t.string(),
    attempt: t.int(),
    durationMs: t.int(),
    tools: t.stringList(),
    resultVariable: t.string(),
    promptHash: t.string({ description: 'A hash of the prompt; never the prompt.' }),
    confidence: t.float(),
    inputTokens: t.int(),
    outputTokens: t.int(),
  }),
});

const CompleteTaskInput = builder.inputType('CompleteTaskInput', {
  fields: (t) => ({
    ...attemptFields(t),
    variables: t.field({ type: 'JSON', required: true }),
    metadata: t.field({ type: AttemptMetadataInput, required: true }),
    steps: t.field({
      type: [BatchStepInput],
      description:
        "The attempt's last step ends (at most 50), journaled first exactly as journalSteps would, in the same request.",
    }),
  }),
});

const FailTaskInput = builder.inputType('FailTaskInput', {
  fields: (t) => ({
    ...attemptFields(t),
    errorType: t.string({ required: true }),
    errorMessage: t.string(),
    retryTimeoutMs: t.int(),
    metadata: t.field({ type: AttemptMetadataInput }),
  }),
});

const DeferTaskInput = builder.inputType('DeferTaskInput', {
  fields: (t) => ({
    ...attemptFields(t),
    reason: t.string({ required: true, description: 'Why, in a few words (kept in history).' }),
    retryAfterMs: t.int({
      required: true,
      description: 'Not handed out again before this many ms (0: at once; cut to ABADA_MAX_DEFER_MS).',
    }),
  }),
});

const ToolCredential = builder
  .objectRef<{ server: string; name: string; secret: string; env: string | null }>('ToolCredential')
  .implement({
    fields: (t) => ({
      server: t.exposeString('server'),
      name: t.exposeString('name'),
      secret: t.exposeString('secret'),
      env: t.exposeString('env', {
        nullable: true,
        description: 'For stdio servers: the environment variable to pass it in.',
      }),
    }),
  });

builder.queryFields((t) => ({
  externalTask: byId(t, ExternalTask, (e, actor, id) => getTask(e.db, actor, id), { nullable: true }),
  toolCredential: t.field({
    type: ToolCredential,
    authScopes: { worker: true },
    args: {
      taskId: t.arg.id({ required: true }),
      server: t.arg.string({ required: true }),
      workerId: t.arg.string({ required: true }),
    },
    resolve: (_r, a, ctx) => toolCredential(ctx.engine, ctx.actor!, a.taskId, a.server, a.workerId),
  }),
}));

builder.mutationFields((t) => ({
  fetchAndLock: t.field({
    type: [LockedTask],
    authScopes: { worker: true },
    args: { input: t.arg({ type: FetchAndLockInput, required: true }) },
    resolve: (_r, { input }, ctx) => fetchAndLock(ctx.engine, ctx.actor!, input, ctx.signal),
  }),
  extendLock: t.field({
    type: ExternalTask,
    authScopes: { worker: true },
    args: { input: t.arg({ type: ExtendLockInput, required: true }) },
    resolve: (_r, { input }, ctx) => extendLease(ctx.engine, ctx.actor!, input),
  }),
  completeTask: t.field({
    type: ExternalTask,
    authScopes: { worker: true },
    args: { input: t.arg({ type: CompleteTaskInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      completeTask(ctx.engine, ctx.actor!, {
        ...input,
        variables: input.variables ?? null,
        steps: input.steps && stepsOf(input.steps, input),
      }),
  }),
  failTask: t.field({
    type: ExternalTask,
    authScopes: { worker: true },
    args: { input: t.arg({ type: FailTaskInput, required: true }) },
    resolve: (_r, { input }, ctx) => failTask(ctx.engine, ctx.actor!, input),
  }),
  deferTask: t.field({
    type: ExternalTask,
    description:
      'Hands the lease back without spending an attempt: the task is OPEN again after retryAfterMs. ' +
      'Refused while a write is STARTED; past ABADA_MAX_DEFERRALS on one attempt it counts as a failure.',
    authScopes: { worker: true },
    args: { input: t.arg({ type: DeferTaskInput, required: true }) },
    resolve: (_r, { input }, ctx) => deferTask(ctx.engine, ctx.actor!, input),
  }),
  retryTask: byId(t, ExternalTask, retryTask, { authScopes: { admin: true } }),
}));
