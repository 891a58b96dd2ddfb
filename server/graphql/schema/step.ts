import { type JournalResult, journalStep, journalSteps, type StepView } from '../../engine/journal/index.js';
import { builder } from '../builder.js';

export const StepKind = builder.enumType('StepKind', { values: ['MODEL_CALL', 'TOOL_CALL'] as const });
export const StepState = builder.enumType('StepState', {
  values: ['PROPOSED', 'APPROVED', 'REJECTED', 'STARTED', 'COMPLETED', 'FAILED', 'OUTCOME_UNKNOWN'] as const,
});
export const StepPurpose = builder.enumType('StepPurpose', {
  description:
    "CALL: a call the model asked for. PRECONDITION / LOOKUP: the engine's reads of a guarded call (SPEC §11), left out of the conversation.",
  values: ['CALL', 'PRECONDITION', 'LOOKUP'] as const,
});
export const TaskState = builder.enumType('TaskState', {
  values: [
    'OPEN',
    'LEASED',
    'AWAITING_APPROVAL',
    'AWAITING_CHILD',
    'COMPLETED',
    'FAILED',
    'CANCELLED',
  ] as const,
});

export const Step = builder.objectRef<StepView>('Step').implement({
  description: 'One model or tool call of an attempt, journaled before it ran.',
  fields: (t) => ({
    taskId: t.exposeID('taskId'),
    attempt: t.exposeInt('attempt'),
    sequence: t.exposeInt('sequence'),
    kind: t.field({ type: StepKind, resolve: (s) => s.kind }),
    state: t.field({ type: StepState, resolve: (s) => s.state }),
    toolRef: t.exposeString('toolRef', { nullable: true }),
    model: t.exposeString('model', { nullable: true }),
    request: t.field({ type: 'JSON', resolve: (s) => s.request }),
    response: t.field({ type: 'JSON', nullable: true, resolve: (s) => s.response }),
    error: t.exposeString('error', { nullable: true }),
    digest: t.exposeString('digest'),
    idempotencyKey: t.exposeString('idempotencyKey', { nullable: true }),
    comment: t.exposeString('comment', { nullable: true }),
    reused: t.exposeBoolean('reused'),
    usage: t.field({ type: 'JSON', nullable: true, resolve: (s) => s.usage }),
    costUsd: t.exposeFloat('costUsd', { nullable: true }),
    approvalId: t.exposeID('approvalId', { nullable: true }),
    purpose: t.field({ type: StepPurpose, resolve: (s) => s.purpose }),
    reconciled: t.exposeBoolean('reconciled', {
      description: "A write whose unknown outcome its lookup settled: the response is the lookup's answer.",
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (s) => s.updatedAt }),
  }),
});

const UsageInput = builder.inputType('UsageInput', {
  fields: (t) => ({ inputTokens: t.int(), outputTokens: t.int(), totalTokens: t.int() }),
});

type InputFields = Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0];

/** Which attempt of which task a worker's call is about. */
export const attemptFields = (t: InputFields) => ({
  taskId: t.id({ required: true }),
  workerId: t.string({ required: true }),
  attempt: t.int({ required: true }),
});

/** The fields of one step, the same in journalStep and in each step of journalSteps. */
const stepFields = (t: InputFields) => ({
  sequence: t.int({ required: true }),
  kind: t.field({ type: StepKind, required: true }),
  state: t.field({ type: StepState, required: true }),
  toolRef: t.string(),
  model: t.string(),
  request: t.field({ type: 'JSON', required: true }),
  response: t.field({ type: 'JSON' }),
  usage: t.field({ type: UsageInput }),
  error: t.string(),
  purpose: t.field({
    type: StepPurpose,
    description: 'CALL by default; PRECONDITION or LOOKUP for the reads of a guarded call (SPEC §11).',
  }),
  toolDescription: t.string({
    description:
      "With a PROPOSED call: the tool server's own description of the tool, shown to approvers as the server's text.",
  }),
});

const JournalStepInput = builder.inputType('JournalStepInput', {
  fields: (t) => ({
    ...attemptFields(t),
    ...stepFields(t),
  }),
});

export const JournalResultRef = builder.objectRef<JournalResult>('JournalResult').implement({
  fields: (t) => ({
    step: t.field({ type: Step, resolve: (r) => r.step }),
    idempotencyKey: t.exposeString('idempotencyKey', { nullable: true }),
    reused: t.exposeBoolean('reused'),
    taskState: t.field({ type: TaskState, resolve: (r) => r.taskState }),
  }),
});

export const BatchStepInput = builder.inputType('BatchStepInput', { fields: stepFields });

const JournalStepsInput = builder.inputType('JournalStepsInput', {
  fields: (t) => ({
    ...attemptFields(t),
    steps: t.field({
      type: [BatchStepInput],
      required: true,
      description: '1 to 50 steps, applied in order, all or nothing.',
    }),
  }),
});

/** A task attempt's batch steps as the journal takes them (journalSteps, each entry of journalBatch). */
export function stepsOf<S extends { request?: unknown; response?: unknown }>(
  steps: S[],
  at: { taskId: string; workerId: string; attempt: number },
) {
  return steps.map((st) => ({
    ...st,
    taskId: at.taskId,
    workerId: at.workerId,
    attempt: at.attempt,
    request: st.request ?? null,
    response: st.response ?? undefined,
  }));
}

builder.mutationFields((t) => ({
  journalStep: t.field({
    type: JournalResultRef,
    authScopes: { worker: true },
    args: { input: t.arg({ type: JournalStepInput, required: true }) },
    resolve: (_r, { input }, ctx) => journalStep(ctx.engine, ctx.actor!, stepsOf([input], input)[0]),
  }),
  journalSteps: t.field({
    type: [JournalResultRef],
    description: 'Several steps of one attempt in one request and one transaction (see journalStep).',
    authScopes: { worker: true },
    args: { input: t.arg({ type: JournalStepsInput, required: true }) },
    resolve: (_r, { input }, ctx) => journalSteps(ctx.engine, ctx.actor!, stepsOf(input.steps, input)),
  }),
}));
