/**
 * Webhooks for integrators: subscriptions (admin), and the dispatcher that sends the outbox rows
 * `notify()` inserted (outbox.ts). At-least-once: a delivery is claimed in a short transaction (FOR
 * UPDATE SKIP LOCKED, then its next_attempt_at pushed past the HTTP timeout as a visibility lease),
 * the transaction commits, the POST goes out holding no lock, and the outcome is recorded in a second
 * short statement. A process dying mid-send leaves the row to be claimed again when the lease passes;
 * the event id lets receivers drop the duplicate.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { approvals, webhookDeliveries, webhookSubscriptions } from '../../db/schema.js';
import { EngineError, invalid, notFound } from '../../errors.js';
import { toApprovalView } from '../approvals/index.js';
import {
  type Actor,
  type EngineContext,
  actorProject,
  query,
  isUuid,
  startBackgroundRunner,
} from '../common/index.js';
import { WEBHOOK_EVENTS } from '../events/index.js';
import {
  deliveryView,
  subscriptionView,
  type WebhookDeliveryView,
  type WebhookSubscriptionView,
} from './views.js';

function requireAdmin(actor: Actor) {
  if (actor.kind !== 'ADMIN') throw new EngineError('FORBIDDEN', 'Only an admin can manage webhooks.');
}

/** Creates a subscription; when no secret is given one is generated and returned (once). */
export async function createWebhookSubscription(
  ctx: EngineContext,
  actor: Actor,
  input: { url: string; events: string[]; secret?: string | null },
): Promise<{ subscription: WebhookSubscriptionView; secret: string | null }> {
  requireAdmin(actor);
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw invalid('url must be an absolute http(s) URL.', 'url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid('url must use http or https.', 'url');
  const events = [...new Set(input.events)];
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (events.length === 0 || unknown.length) {
    throw invalid(`events must be among ${WEBHOOK_EVENTS.join(', ')}; got ${unknown.join(', ')}.`, 'events');
  }
  if (input.secret != null && input.secret.length < 16)
    throw invalid('A webhook secret must be at least 16 characters.', 'secret');
  const generated = input.secret == null ? `whsec_${randomBytes(32).toString('base64url')}` : null;
  const secret = input.secret ?? generated!;
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
  return { subscription: subscriptionView(row), secret: generated };
}

export async function listWebhookSubscriptions(
  ctx: EngineContext,
  actor: Actor,
): Promise<WebhookSubscriptionView[]> {
  requireAdmin(actor);
  const rows = await ctx.db
    .select()
    .from(webhookSubscriptions)
    .where(eq(webhookSubscriptions.projectId, actorProject(actor)))
    .orderBy(desc(webhookSubscriptions.createdAt));
  return rows.map(subscriptionView);
}

/** Deletes a subscription and (cascade) its deliveries; pending ones are never sent. */
export async function deleteWebhookSubscription(ctx: EngineContext, actor: Actor, id: string) {
  requireAdmin(actor);
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
  requireAdmin(actor);
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
  const full = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(
      inArray(
        webhookDeliveries.id,
        rows.map((r) => r.id),
      ),
    );
  return full.sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime()).map(deliveryView);
}

/** `v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>` — the recipe in docs/webhooks.md. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

interface Claimed {
  id: string;
  event_id: string;
  event_type: string;
  payload: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
  attempts: number;
  url: string;
  secret_enc: string;
}

/** Claims due deliveries and commits at once: the returned rows are ours until their lease passes. */
async function claim(ctx: EngineContext, batch: number): Promise<Claimed[]> {
  const leaseMs = ctx.config.webhooks.timeoutMs + 30_000;
  return query<Claimed>(
    ctx.db,
    sql`WITH due AS (
          SELECT d.id FROM webhook_deliveries d
           WHERE d.state = 'PENDING' AND d.next_attempt_at <= now()
           ORDER BY d.next_attempt_at LIMIT ${batch}
             FOR UPDATE SKIP LOCKED)
        UPDATE webhook_deliveries d
           SET attempts = d.attempts + 1,
               next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
          FROM due, webhook_subscriptions s
         WHERE d.id = due.id AND s.id = d.subscription_id
        RETURNING d.id, d.event_id, d.event_type, d.payload, d.attempts, s.url, s.secret_enc`,
  );
}

/** Approval payloads get their arguments (redacted by the evidence policy) once, before the first send. */
async function completePayload(ctx: EngineContext, d: Claimed): Promise<Claimed['payload']> {
  if (!d.event_type.startsWith('approval.') || 'arguments' in d.payload.data) return d.payload;
  const [row] = await ctx.db
    .select()
    .from(approvals)
    .where(eq(approvals.id, String(d.payload.data.id)));
  if (!row) return d.payload;
  const v = await toApprovalView(ctx, row);
  const payload = {
    ...d.payload,
    data: { ...d.payload.data, arguments: v.arguments, redactedPaths: v.redactedPaths },
  };
  // Send what jsonb stored (its key order), so every attempt's body is byte-identical.
  const [stored] = await ctx.db
    .update(webhookDeliveries)
    .set({ payload })
    .where(eq(webhookDeliveries.id, d.id))
    .returning({ payload: webhookDeliveries.payload });
  return (stored?.payload as Claimed['payload'] | undefined) ?? payload;
}

async function send(
  ctx: EngineContext,
  d: Claimed,
): Promise<{ status: number | null; error: string | null }> {
  try {
    const body = JSON.stringify(await completePayload(ctx, d));
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(d.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(ctx.config.webhooks.timeoutMs),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Abada-Webhooks/1',
        'abada-event-id': d.event_id,
        'abada-timestamp': timestamp,
        'abada-signature': signWebhook(ctx.sealer.open(d.secret_enc), timestamp, body),
      },
      body,
    });
    await res.body?.cancel().catch(() => {});
    return res.ok ? { status: res.status, error: null } : { status: res.status, error: `HTTP ${res.status}` };
  } catch (e) {
    return { status: null, error: (e instanceof Error ? e.message : String(e)).slice(0, 500) };
  }
}

/** Exponential backoff from ABADA_WEBHOOK_BACKOFF_MS, ±25 % jitter, capped at an hour. */
export function retryDelayMs(base: number, attempts: number, random = Math.random()): number {
  const exp = Math.min(base * 2 ** Math.max(attempts - 1, 0), 3_600_000);
  return Math.round(exp * (0.75 + random * 0.5));
}

async function record(ctx: EngineContext, d: Claimed, r: { status: number | null; error: string | null }) {
  const { maxAttempts, backoffMs } = ctx.config.webhooks;
  if (r.error === null) {
    await ctx.db.execute(sql`UPDATE webhook_deliveries SET state = 'DELIVERED', delivered_at = now(),
      last_status = ${r.status}, last_error = NULL WHERE id = ${d.id}`);
    return;
  }
  const failed = d.attempts >= maxAttempts;
  const delay = retryDelayMs(backoffMs, d.attempts);
  await ctx.db.execute(sql`UPDATE webhook_deliveries
      SET state = ${failed ? 'FAILED' : 'PENDING'}, last_status = ${r.status}, last_error = ${r.error},
          next_attempt_at = now() + make_interval(secs => ${delay / 1000})
    WHERE id = ${d.id}`);
}

/** Sends every due delivery (claim, commit, send, record); returns how many were attempted. */
export async function dispatchWebhooks(ctx: EngineContext, batch = 20): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await claim(ctx, batch);
    await Promise.all(claimed.map(async (d) => record(ctx, d, await send(ctx, d))));
    total += claimed.length;
    if (claimed.length < batch) return total;
  }
}

/** Dispatches when an approval or incident event commits (NOTIFY) and every ABADA_WEBHOOK_POLL_MS. */
export function startWebhookDispatcher(ctx: EngineContext, onError: (e: unknown) => void = () => {}) {
  return startBackgroundRunner(ctx, () => dispatchWebhooks(ctx), {
    intervalMs: ctx.config.webhooks.pollMs,
    wakes: (e) => e.type === 'approval' || e.type === 'incident',
    onError,
  });
}
