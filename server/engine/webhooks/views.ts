/** Webhook subscriptions (never their secret) and deliveries as an admin sees them. */
import type { WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/schema.js';
import type { WebhookPayload } from '../../shared/types.js';
import type { Sealer } from '../common/index.js';
import { keyOf } from './signing.js';

export interface WebhookSubscriptionView {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  active: boolean;
  /** why `active` is false, e.g. the endpoint answered 410 Gone */
  disabledReason: string | null;
  /** the secret is not base64 (a subscriber chose it before Standard Webhooks): rotate it */
  secretNeedsRotation: boolean;
  /** while set (and in the future), the previous secret still signs alongside the current one */
  previousSecretExpiresAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
}

export interface WebhookDeliveryView {
  id: string;
  subscriptionId: string;
  /** one id per event, shared by every subscription it is delivered to */
  eventId: string;
  eventType: string;
  payload: WebhookPayload;
  state: WebhookDeliveryRow['state'];
  attempts: number;
  nextAttemptAt: Date;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

export function subscriptionView(r: WebhookSubscriptionRow, sealer: Sealer): WebhookSubscriptionView {
  const overlapping =
    r.previousSecretEnc !== null && (r.previousSecretExpiresAt?.getTime() ?? 0) > Date.now();
  return {
    id: r.id,
    projectId: r.projectId,
    url: r.url,
    events: r.events,
    active: r.active,
    disabledReason: r.disabledReason,
    secretNeedsRotation: keyOf(sealer.open(r.secretEnc)).kind === 'raw',
    previousSecretExpiresAt: overlapping ? r.previousSecretExpiresAt : null,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
  };
}

export function deliveryView(r: WebhookDeliveryRow): WebhookDeliveryView {
  return {
    id: r.id,
    subscriptionId: r.subscriptionId,
    eventId: r.eventId,
    eventType: r.eventType,
    payload: r.payload,
    state: r.state,
    attempts: r.attempts,
    nextAttemptAt: r.nextAttemptAt,
    lastStatus: r.lastStatus,
    lastError: r.lastError,
    deliveredAt: r.deliveredAt,
    createdAt: r.createdAt,
  };
}
