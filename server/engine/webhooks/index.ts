/** Webhook subscriptions and their Standard Webhooks deliveries. */
export { startWebhookDispatcher } from './dispatch.js';
export {
  createWebhookSubscription,
  deleteWebhookSubscription,
  listWebhookDeliveries,
  listWebhookSubscriptions,
  rotateWebhookSecret,
} from './subscriptions.js';
export type { WebhookDeliveryView, WebhookSubscriptionView } from './views.js';
