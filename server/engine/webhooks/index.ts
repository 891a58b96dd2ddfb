/** Webhook subscriptions and their Standard Webhooks deliveries. */
export { startWebhookDispatcher } from './dispatch.js';
export {
  createWebhookSubscription,
  deleteWebhookSubscription,
  listWebhookDeliveries,
  listWebhookSubscriptions,
  rotateWebhookSecret,
  type WebhookDeliveryView,
  type WebhookSubscriptionView,
} from './subscriptions.js';
