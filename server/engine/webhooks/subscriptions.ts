/** Webhook subscriptions (admin): create, list, delete, rotate; secrets sealed, shown once, not in views. */
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import {
  type WebhookDeliveryRow,
  webhookDeliveries,
  type WebhookSubscriptionRow,
  webhookSubscriptions,
} from '../../db/schema.js';
import { invalid, notFound } from '../../errors.js';
import {
  type Actor,
  type EngineContext,
  actorProject,
  isUuid,
  omit,
  query,
  requireAdmin,
  type Sealer,
} from '../common/index.js';
import { WEBHOOK_EVENTS } from '../events/index.js';
import { generateSecret, keyOf, secretProblem } from './signing.js';
import { transaction } from '../../db/pg.js';

const HIDDEN = ['secretEnc', 'keyId', 'previousSecretEnc'] as const;

export type WebhookSubscriptionView = Omit<WebhookSubscriptionRow, (typeof HIDDEN)[number]> & {
  /** the secret is not base64 (a subscriber chose it before Standard Webhooks): rotate it */
  secretNeedsRotation: boolean;
};

export type WebhookDeliveryView = WebhookDeliveryRow;

function subscriptionView(r: WebhookSubscriptionRow, sealer: Sealer): WebhookSubscriptionView {
  // the previous secret signs alongside the current one while it is set and its window is open
  const overlapping =
    r.previousSecretEnc !== null && (r.previousSecretExpiresAt?.getTime() ?? 0) > Date.now();
  return {
    ...omit(r, HIDDEN),
    secretNeedsRotation: keyOf(sealer.open(r.secretEnc)).kind === 'raw',
    previousSecretExpiresAt: overlapping ? r.previousSecretExpiresAt : null,
  };
}

const WEBHOOKS = 'manage webhooks';

/** The secret asked for, refused when it is no usable secret; or a generated one, returned once. */
function chooseSecret(asked: string | null | undefined): { secret: string; generated: string | null } {
  if (asked == null) {
    const generated = generateSecret();
    return { secret: generated, generated };
  }
  const problem = secretProblem(asked);
  if (problem) throw invalid(problem, 'secret');
  return { secret: asked, generated: null };
}

/** Creates a subscription; when no secret is given one is generated and returned (once). */
export async function createWebhookSubscription(
  ctx: EngineContext,
  actor: Actor,
  input: { url: string; events: string[]; secret?: string | null },
): Promise<{ subscription: WebhookSubscriptionView; secret: string | null }> {
  requireAdmin(actor, WEBHOOKS);
  if (!URL.canParse(input.url)) throw invalid('url must be an absolute http(s) URL.', 'url');
  const url = new URL(input.url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid('url must use http or https.', 'url');
  const events = [...new Set(input.events)];
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (events.length === 0 || unknown.length) {
    throw invalid(`events must be among ${WEBHOOK_EVENTS.join(', ')}; got ${unknown.join(', ')}.`, 'events');
  }
  const { secret, generated } = chooseSecret(input.secret);
  const [row] = await ctx.db
    .insert(webhookSubscriptions)
    .values({
      projectId: actorProject(actor),
      url: url.toString(),
      events,
      secretEnc: ctx.sealer.seal(secret),
      keyId: ctx.sealer.currentKeyId,
      createdBy: actor.principalId,
    })
    .returning();
  return { subscription: subscriptionView(row, ctx.sealer), secret: generated };
}

export async function listWebhookSubscriptions(ctx: EngineContext, actor: Actor) {
  requireAdmin(actor, WEBHOOKS);
  const rows = await ctx.db
    .select()
    .from(webhookSubscriptions)
    .where(eq(webhookSubscriptions.projectId, actorProject(actor)))
    .orderBy(desc(webhookSubscriptions.createdAt));
  return rows.map((r) => subscriptionView(r, ctx.sealer));
}

/** Deletes a subscription and (cascade) its deliveries; pending ones are never sent. */
export async function deleteWebhookSubscription(ctx: EngineContext, actor: Actor, id: string) {
  requireAdmin(actor, WEBHOOKS);
  if (!isUuid(id)) throw notFound('webhook subscription', id);
  const rows = await ctx.db
    .delete(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.projectId, actorProject(actor))))
    .returning({ id: webhookSubscriptions.id });
  if (!rows.length) throw notFound('webhook subscription', id);
  return true;
}

export async function listWebhookDeliveries(
  ctx: EngineContext,
  actor: Actor,
  a: { subscriptionId?: string | null; state?: string | null; first?: number | null },
): Promise<WebhookDeliveryView[]> {
  requireAdmin(actor, WEBHOOKS);
  if (a.subscriptionId && !isUuid(a.subscriptionId)) return [];
  const rows = await query<{ id: string }>(
    ctx.db,
    sql`SELECT d.id FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
         WHERE s.project_id = ${actorProject(actor)}
           ${a.subscriptionId ? sql`AND d.subscription_id = ${a.subscriptionId}` : sql``}
           ${a.state ? sql`AND d.state = ${a.state}` : sql``}
         ORDER BY d.created_at DESC LIMIT ${Math.min(Math.max(a.first ?? 50, 1), 500)}`,
  );
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const full = await ctx.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, ids));
  return full.sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime());
}

const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;
const DEFAULT_OVERLAP_SECONDS = 24 * 3600;

/**
 * Replaces a subscription's signing secret. For `overlapSeconds` (default a day) the old secret signs
 * alongside the new one (`webhook-signature: v1,<new> v1,<old>`), so receivers switch without losing a
 * delivery; a rotation during an overlap drops the older secret at once (two sign at most).
 */
export async function rotateWebhookSecret(
  ctx: EngineContext,
  actor: Actor,
  input: { id: string; secret?: string | null; overlapSeconds?: number | null },
): Promise<{ subscription: WebhookSubscriptionView; secret: string | null }> {
  requireAdmin(actor, WEBHOOKS);
  if (!isUuid(input.id)) throw notFound('webhook subscription', input.id);
  const overlap = input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS)
    throw invalid(`overlapSeconds must be between 0 and ${MAX_OVERLAP_SECONDS} (a week).`, 'overlapSeconds');
  const { secret, generated } = chooseSecret(input.secret);
  return transaction(ctx.db, async (tx) => {
    const [current] = await tx
      .select()
      .from(webhookSubscriptions)
      .where(
        and(eq(webhookSubscriptions.id, input.id), eq(webhookSubscriptions.projectId, actorProject(actor))),
      )
      .for('update');
    if (!current) throw notFound('webhook subscription', input.id);
    // Re-seal the old secret with the current key so both columns share the row's key_id.
    const previous = overlap > 0 ? ctx.sealer.seal(ctx.sealer.open(current.secretEnc)) : null;
    const [row] = await tx
      .update(webhookSubscriptions)
      .set({
        secretEnc: ctx.sealer.seal(secret),
        keyId: ctx.sealer.currentKeyId,
        previousSecretEnc: previous,
        previousSecretExpiresAt: previous ? sql`now() + make_interval(secs => ${overlap})` : null,
      })
      .where(eq(webhookSubscriptions.id, current.id))
      .returning();
    return { subscription: subscriptionView(row, ctx.sealer), secret: generated };
  });
}
