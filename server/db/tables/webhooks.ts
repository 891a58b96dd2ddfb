import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import type { WebhookPayload } from '../../shared/types.js';
import { createdAt, projectId, references, ts } from './columns.js';

/**
 * Integrator webhooks: a subscription names a project, a URL and the events it wants; its signing secret
 * is sealed like every other secret (key_id names the key of both sealed secrets).
 */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: projectId(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    secretEnc: text('secret_enc').notNull(),
    keyId: text('key_id').notNull(),
    active: boolean('active').notNull().default(true),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
    /** during a rotation's overlap window the old secret signs too (sealed like secret_enc) */
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    /** why `active` turned false (e.g. the endpoint answered 410 Gone) */
    disabledReason: text('disabled_reason'),
  },
  (t) => [index('webhook_subscriptions_project_idx').on(t.projectId).where(sql`active`)],
);

/**
 * The transactional outbox of webhooks: rows are inserted by `notify()` in the transaction of the event,
 * claimed by any engine process (FOR UPDATE SKIP LOCKED) and sent outside any transaction.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    subscriptionId: references('subscription_id', () => webhookSubscriptions.id, { onDelete: 'cascade' }),
    /** one id per event, shared by every subscription it is delivered to; receivers dedupe on it */
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').$type<WebhookPayload>().notNull(),
    state: text('state').$type<'PENDING' | 'DELIVERED' | 'FAILED'>().notNull().default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`state = 'PENDING'`),
    index('webhook_deliveries_subscription_idx').on(t.subscriptionId, t.createdAt),
  ],
);

export type WebhookSubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
