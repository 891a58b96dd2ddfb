/**
 * Sends the outbox rows (events/outbox.ts), at least once: a delivery is claimed in a short transaction
 * (FOR UPDATE SKIP LOCKED, next_attempt_at pushed past the HTTP timeout as a visibility lease), the POST
 * goes out holding no lock, and the outcome is recorded in a second statement. A process dying mid-send
 * leaves the row to be claimed again when the lease passes; receivers drop the duplicate by `webhook-id`.
 */
import { eq, sql } from 'drizzle-orm';
import { approvals, webhookDeliveries } from '../../db/schema.js';
import { toApprovalView } from '../approvals/index.js';
import { type EngineContext, query, startBackgroundRunner } from '../common/index.js';
import { signLegacy, signStandard } from './signing.js';

interface Claimed {
  id: string;
  event_id: string;
  event_type: string;
  payload: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
  attempts: number;
  subscription_id: string;
  url: string;
  secret_enc: string;
  /** the previous secret, only while its overlap window is open */
  previous_secret_enc: string | null;
}

/** Claims due deliveries and commits at once: the returned rows are ours until their lease passes. */
async function claim(ctx: EngineContext, batch: number): Promise<Claimed[]> {
  const leaseMs = ctx.config.webhooks.timeoutMs + 30_000;
  return query<Claimed>(
    ctx.db,
    sql`WITH due AS (
          SELECT d.id FROM webhook_deliveries d
            JOIN webhook_subscriptions ws ON ws.id = d.subscription_id AND ws.active
           WHERE d.state = 'PENDING' AND d.next_attempt_at <= now()
           ORDER BY d.next_attempt_at LIMIT ${batch}
             FOR UPDATE OF d SKIP LOCKED)
        UPDATE webhook_deliveries d
           SET attempts = d.attempts + 1,
               next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
          FROM due, webhook_subscriptions s
         WHERE d.id = due.id AND s.id = d.subscription_id
        RETURNING d.id, d.event_id, d.event_type, d.payload, d.attempts, s.id AS subscription_id, s.url,
                  s.secret_enc,
                  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_enc END
                    AS previous_secret_enc`,
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

/**
 * One attempt. Only the endpoint's failures are the delivery's (recorded, retried with backoff); one before
 * the POST (the database, a secret sealed with a dropped key) fails the round, and the lease brings it back.
 */
async function send(ctx: EngineContext, d: Claimed) {
  const body = JSON.stringify(await completePayload(ctx, d));
  const current = ctx.sealer.open(d.secret_enc);
  const signing = d.previous_secret_enc ? [current, ctx.sealer.open(d.previous_secret_enc)] : [current];
  const at = Math.floor(Date.now() / 1000);
  // Standard Webhooks headers, then the deprecated Abada-* ones (one more release)
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Abada-Webhooks/1',
    'webhook-id': d.event_id,
    'webhook-timestamp': String(at),
    'webhook-signature': signStandard(signing, d.event_id, at, body),
    'abada-event-id': d.event_id,
    'abada-timestamp': String(at),
    'abada-signature': signLegacy(current, at, body),
  };
  let res: Response;
  try {
    res = await fetch(d.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(ctx.config.webhooks.timeoutMs),
      headers,
      body,
    });
  } catch (e) {
    // fetch rejects a network failure with TypeError('fetch failed', { cause }) and the timeout with
    // the signal's TimeoutError: either is the endpoint's
    if (!(e instanceof TypeError || (e instanceof DOMException && e.name === 'TimeoutError'))) throw e;
    return { status: null, error: e.message.slice(0, 500) };
  }
  // the answer's body is not read; a stream that fails while it is dropped changes nothing
  await res.body?.cancel().catch(() => {});
  return res.ok ? { status: res.status, error: null } : { status: res.status, error: `HTTP ${res.status}` };
}

/** Exponential backoff from ABADA_WEBHOOK_BACKOFF_MS, ±25 % jitter, capped at an hour. */
function retryDelayMs(base: number, attempts: number, random = Math.random()): number {
  const exp = Math.min(base * 2 ** Math.max(attempts - 1, 0), 3_600_000);
  return Math.round(exp * (0.75 + random * 0.5));
}

const GONE_REASON = 'The endpoint answered 410 Gone: create a new subscription to receive events again.';

/**
 * 410 Gone: the subscription stops (active = false, with the reason) and its deliveries still pending
 * end FAILED in the same statement, so nothing is sent to an endpoint that asked to be forgotten.
 */
async function disableGone(ctx: EngineContext, d: Claimed) {
  await ctx.db.execute(sql`
    WITH sub AS (
      UPDATE webhook_subscriptions SET active = false, disabled_reason = ${GONE_REASON}
       WHERE id = ${d.subscription_id} RETURNING id)
    UPDATE webhook_deliveries SET state = 'FAILED',
           last_status = CASE WHEN id = ${d.id} THEN 410 ELSE last_status END,
           last_error = CASE WHEN id = ${d.id} THEN 'HTTP 410' ELSE 'subscription disabled (410 Gone)' END
     WHERE subscription_id IN (SELECT id FROM sub) AND (state = 'PENDING' OR id = ${d.id})`);
}

async function record(ctx: EngineContext, d: Claimed, r: { status: number | null; error: string | null }) {
  const { maxAttempts, backoffMs } = ctx.config.webhooks;
  if (r.error === null) {
    await ctx.db.execute(sql`UPDATE webhook_deliveries SET state = 'DELIVERED', delivered_at = now(),
      last_status = ${r.status}, last_error = NULL WHERE id = ${d.id}`);
    return;
  }
  if (r.status === 410) return disableGone(ctx, d);
  const failed = d.attempts >= maxAttempts;
  const delay = retryDelayMs(backoffMs, d.attempts);
  await ctx.db.execute(sql`UPDATE webhook_deliveries
      SET state = ${failed ? 'FAILED' : 'PENDING'}, last_status = ${r.status}, last_error = ${r.error},
          next_attempt_at = now() + make_interval(secs => ${delay / 1000})
    WHERE id = ${d.id}`);
}

/** Sends every due delivery (claim, commit, send, record); returns how many were attempted. */
async function dispatchWebhooks(ctx: EngineContext, batch = 20): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await claim(ctx, batch);
    await Promise.all(claimed.map(async (d) => record(ctx, d, await send(ctx, d))));
    total += claimed.length;
    if (claimed.length < batch) return total;
  }
}

/** Dispatches when an approval or incident event commits (NOTIFY) and every ABADA_WEBHOOK_POLL_MS. */
export function startWebhookDispatcher(ctx: EngineContext, onError: (e: unknown) => void) {
  return startBackgroundRunner(ctx, () => dispatchWebhooks(ctx), {
    intervalMs: ctx.config.webhooks.pollMs,
    wakes: (e) => e.type === 'approval' || e.type === 'incident',
    onError,
  });
}
