import { WEBHOOK_EVENTS } from '../../engine/events/index.js';
import {
  createWebhookSubscription,
  deleteWebhookSubscription,
  listWebhookDeliveries,
  listWebhookSubscriptions,
  rotateWebhookSecret,
  type WebhookDeliveryView,
  type WebhookSubscriptionView,
} from '../../engine/webhooks/index.js';
import { builder, byId } from '../builder.js';

const WebhookDeliveryState = builder.enumType('WebhookDeliveryState', {
  values: ['PENDING', 'DELIVERED', 'FAILED'] as const,
});

const WebhookSubscription = builder.objectRef<WebhookSubscriptionView>('WebhookSubscription').implement({
  description:
    'An integrator endpoint that receives Standard Webhooks POSTs (docs/webhooks.md). The secret is never shown again.',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    events: t.exposeStringList('events'),
    active: t.exposeBoolean('active'),
    disabledReason: t.exposeString('disabledReason', {
      nullable: true,
      description: 'Why active is false, e.g. the endpoint answered 410 Gone.',
    }),
    secretNeedsRotation: t.exposeBoolean('secretNeedsRotation', {
      description:
        'The secret is not base64 (chosen before Standard Webhooks), so Standard Webhooks libraries cannot verify it as a whsec_ secret: call rotateWebhookSecret.',
    }),
    previousSecretExpiresAt: t.expose('previousSecretExpiresAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'Until then the previous secret signs too (a second v1 signature); null outside a rotation.',
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (s) => s.createdAt }),
  }),
});

const WebhookDelivery = builder.objectRef<WebhookDeliveryView>('WebhookDelivery').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    subscriptionId: t.exposeID('subscriptionId'),
    eventId: t.exposeID('eventId', { description: 'Sent as webhook-id; the same on every attempt.' }),
    eventType: t.exposeString('eventType'),
    state: t.field({ type: WebhookDeliveryState, resolve: (d) => d.state }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.field({ type: 'DateTime', resolve: (d) => d.nextAttemptAt }),
    lastStatus: t.exposeInt('lastStatus', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.deliveredAt }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
    payload: t.expose('payload', {
      type: 'JSON',
      description: 'The body sent: {id, type, createdAt, data}.',
    }),
  }),
});

const CreatedWebhookSubscription = builder
  .objectRef<{ subscription: WebhookSubscriptionView; secret: string | null }>('CreatedWebhookSubscription')
  .implement({
    fields: (t) => ({
      subscription: t.field({ type: WebhookSubscription, resolve: (r) => r.subscription }),
      secret: t.exposeString('secret', {
        nullable: true,
        description: 'The generated signing secret, shown once; null when you supplied your own.',
      }),
    }),
  });

const CreateWebhookSubscriptionInput = builder.inputType('CreateWebhookSubscriptionInput', {
  fields: (t) => ({
    url: t.string({ required: true }),
    events: t.stringList({ required: true, description: `Among ${WEBHOOK_EVENTS.join(', ')}.` }),
    secret: t.string({
      description: 'whsec_ + standard base64 of 16 to 64 bytes; generated (and returned once) when absent.',
    }),
  }),
});

const RotateWebhookSecretInput = builder.inputType('RotateWebhookSecretInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    secret: t.string({
      description: 'Like createWebhookSubscription: generated (and returned once) when absent.',
    }),
    overlapSeconds: t.int({
      description:
        'How long the old secret keeps signing alongside the new one (0 to 604800; default 86400).',
    }),
  }),
});

builder.queryFields((t) => ({
  webhookSubscriptions: t.field({
    type: [WebhookSubscription],
    authScopes: { admin: true },
    resolve: (_r, _a, ctx) => listWebhookSubscriptions(ctx.engine, ctx.actor!),
  }),
  webhookDeliveries: t.field({
    type: [WebhookDelivery],
    authScopes: { admin: true },
    description: 'Newest first.',
    args: { subscriptionId: t.arg.id(), state: t.arg({ type: WebhookDeliveryState }), first: t.arg.int() },
    resolve: (_r, a, ctx) => listWebhookDeliveries(ctx.engine, ctx.actor!, a),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookSubscription: t.field({
    type: CreatedWebhookSubscription,
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateWebhookSubscriptionInput, required: true }) },
    resolve: (_r, { input }, ctx) => createWebhookSubscription(ctx.engine, ctx.actor!, input),
  }),
  deleteWebhookSubscription: byId(t, 'Boolean', deleteWebhookSubscription, { authScopes: { admin: true } }),
  rotateWebhookSecret: t.field({
    type: CreatedWebhookSubscription,
    authScopes: { admin: true },
    args: { input: t.arg({ type: RotateWebhookSecretInput, required: true }) },
    resolve: (_r, { input }, ctx) => rotateWebhookSecret(ctx.engine, ctx.actor!, input),
  }),
}));
