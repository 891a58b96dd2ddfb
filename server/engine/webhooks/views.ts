/** Webhook subscriptions (never their secret) and deliveries as an admin sees them. */
import type { WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/schema.js';
import { omit, type Sealer } from '../common/index.js';
import { keyOf } from './signing.js';

const HIDDEN = ['secretEnc', 'keyId', 'previousSecretEnc'] as const;

export type WebhookSubscriptionView = Omit<WebhookSubscriptionRow, (typeof HIDDEN)[number]> & {
  /** the secret is not base64 (a subscriber chose it before Standard Webhooks): rotate it */
  secretNeedsRotation: boolean;
};

export type WebhookDeliveryView = WebhookDeliveryRow;

export function subscriptionView(r: WebhookSubscriptionRow, sealer: Sealer): WebhookSubscriptionView {
  // the previous secret signs alongside the current one while it is set and its window is open
  const overlapping =
    r.previousSecretEnc !== null && (r.previousSecretExpiresAt?.getTime() ?? 0) > Date.now();
  return {
    ...omit(r, HIDDEN),
    secretNeedsRotation: keyOf(sealer.open(r.secretEnc)).kind === 'raw',
    previousSecretExpiresAt: overlapping ? r.previousSecretExpiresAt : null,
  };
}
