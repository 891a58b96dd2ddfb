/** Webhook subscriptions (never their secret) and deliveries as an admin sees them. */
import type { WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/schema.js';
import type { WebhookPayload } from '../../shared/types.js';

export interface WebhookSubscriptionView {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  active: boolean;
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

export function subscriptionView(r: WebhookSubscriptionRow): WebhookSubscriptionView {
  return {
    id: r.id,
    projectId: r.projectId,
    url: r.url,
    events: r.events,
    active: r.active,
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
