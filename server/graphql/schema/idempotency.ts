import { type KeySend, type KeyTraceView, stepByIdempotencyKey } from '../../engine/journal/index.js';
import { builder } from '../builder.js';
import { Step, StepState } from './step.js';

const KeySendReason = builder.enumType('KeySendReason', {
  description:
    'Why the engine counts a send: the STARTED that created the key, a later attempt that reused it, or a lease acquired while its step was STARTED.',
  values: ['CREATED', 'REUSED', 'LEASE'] as const,
});

const KeySendRef = builder.objectRef<KeySend>('KeySend').implement({
  fields: (t) => ({
    reason: t.field({ type: KeySendReason, resolve: (s) => s.reason }),
    attempt: t.exposeInt('attempt'),
    sequence: t.exposeInt('sequence'),
    at: t.field({ type: 'DateTime', resolve: (s) => s.at }),
    workerId: t.exposeString('workerId', { nullable: true }),
  }),
});

const IdempotencyKeyTrace = builder.objectRef<KeyTraceView>('IdempotencyKeyTrace').implement({
  description:
    "The step that holds an idempotency key, how it ended, and each time the engine let it be sent (a worker's own retries inside one lease are not seen).",
  fields: (t) => ({
    key: t.exposeString('key'),
    processInstanceId: t.exposeID('processInstanceId'),
    taskId: t.exposeID('taskId'),
    attempt: t.exposeInt('attempt', { description: 'the attempt of the write that created the key' }),
    sequence: t.exposeInt('sequence'),
    toolRef: t.exposeString('toolRef', { nullable: true }),
    outcome: t.expose('outcome', {
      type: StepState,
      description: 'COMPLETED when any step holding the key completed, else the latest one’s state',
    }),
    steps: t.field({ type: [Step], resolve: (k) => k.steps }),
    sends: t.field({ type: [KeySendRef], resolve: (k) => k.sends }),
  }),
});

builder.queryField('stepByIdempotencyKey', (t) =>
  t.field({
    type: IdempotencyKeyTrace,
    nullable: true,
    description:
      'Which step holds an idempotency key and how often it was sent (admins and people of the project).',
    authScopes: { admin: true, human: true },
    args: { key: t.arg.string({ required: true }) },
    resolve: (_r, { key }, ctx) => stepByIdempotencyKey(ctx.engine, ctx.actor!, key),
  }),
);
