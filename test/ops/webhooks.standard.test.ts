/**
 * Standard Webhooks: real deliveries verify with the `standardwebhooks` package's own `Webhook.verify`;
 * the specification's published known-answer vector passes through Abada's signer; a rotation's
 * overlap window signs with both secrets, and after it only the new one verifies; secrets from before
 * (Abada's URL-safe ones, a subscriber's non-base64 one) still verify as docs/webhooks.md says; a 410
 * Gone answer disables the subscription and nothing more is sent to it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSubscriptions } from '../../server/db/schema.js';
import { keyOf, signStandard } from '../../server/engine/webhooks/testing.js';
import { codeOf, startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { waitFor } from '../helpers/wait.js';

interface Received {
  headers: Record<string, string>;
  body: string;
}

function receiver(status: () => number) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      got.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(status()).end();
    });
  });
  return {
    got,
    server,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    listen: () => new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r())),
  };
}

let engine: TestEngine;
let sim: WorkerSim;
const ok = receiver(() => 204);
const legacy = receiver(() => 200);
const gone = receiver(() => 410);

beforeAll(async () => {
  await Promise.all([ok.listen(), legacy.listen(), gone.listen()]);
  engine = await startTestEngine({
    env: { ABADA_WEBHOOK_BACKOFF_MS: '40', ABADA_WEBHOOK_POLL_MS: '50', ABADA_WEBHOOK_MAX_ATTEMPTS: '3' },
  });
  const { worker } = await setupSeeds(engine);
  sim = new WorkerSim(engine, worker, 'standard-sim');
});
afterAll(async () => {
  await engine?.close();
  for (const r of [ok, legacy, gone]) r.server.close();
});

const CREATE = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) {
  secret subscription { id active secretNeedsRotation previousSecretExpiresAt } } }`;
const ROTATE = `mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) {
  secret subscription { id previousSecretExpiresAt } } }`;
const SUBSCRIPTIONS = `{ webhookSubscriptions { id active disabledReason secretNeedsRotation } }`;

/** One approval.opened event: a refund proposed by a simulated worker. */
async function propose(): Promise<string> {
  const started = await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
  const task = await sim.fetchOne();
  await sim.model(task, 1, 'STARTED');
  await sim.model(task, 1, 'COMPLETED');
  await sim.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89 });
  return started.startProcess.id;
}

/** The delivery of the approval.opened event of `instanceId` at a receiver. */
function deliveryOf(r: ReturnType<typeof receiver>, instanceId: string) {
  return waitFor(`the delivery for ${instanceId}`, async () =>
    r.got.find((g) => JSON.parse(g.body).data.processInstanceId === instanceId),
  );
}

const verifies = (wh: Webhook, d: Received) => {
  try {
    wh.verify(d.body, d.headers);
    return true;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return false;
    throw e;
  }
};

describe('Standard Webhooks', () => {
  it("passes the specification's known-answer vector through Abada's signer", () => {
    // libraries/javascript/src/webhook.test.ts ("sign function works") in standard-webhooks/standard-webhooks
    const signature = signStandard(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('delivers with webhook-id, webhook-timestamp and a signature Webhook.verify accepts, body unchanged', async () => {
    const created = (
      await engine.ok(engine.adminToken, CREATE, { input: { url: ok.url(), events: ['approval.opened'] } })
    ).createWebhookSubscription;
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.subscription.secretNeedsRotation).toBe(false);
    const d = await deliveryOf(ok, await propose());
    const payload = new Webhook(created.secret).verify(d.body, d.headers) as { id: string; type: string };
    expect(payload).toMatchObject({ id: d.headers['webhook-id'], type: 'approval.opened' });
    expect(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    expect(d.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The deprecated headers still go out for one release, with the same id.
    expect(d.headers['abada-event-id']).toBe(d.headers['webhook-id']);
    expect(d.headers['abada-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifies(new Webhook(`whsec_${randomBytes(32).toString('base64')}`), d)).toBe(false);
    expect(verifies(new Webhook(created.secret), { ...d, body: d.body.replace('5531', '5532') })).toBe(false);
  });

  it('signs with both secrets during a rotation window, and with only the new one after it', async () => {
    const [{ id: subId }] = (await engine.ok(engine.adminToken, SUBSCRIPTIONS)).webhookSubscriptions;
    const old = await engine.context.db.select().from(webhookSubscriptions).where(sql`id = ${subId}`);
    const oldSecret = engine.context.sealer.open(old[0].secretEnc);
    const rotated = (
      await engine.ok(engine.adminToken, ROTATE, { input: { id: subId, overlapSeconds: 3600 } })
    ).rotateWebhookSecret;
    expect(rotated.secret).not.toBe(oldSecret);
    expect(new Date(rotated.subscription.previousSecretExpiresAt).getTime()).toBeGreaterThan(Date.now());

    const during = await deliveryOf(ok, await propose());
    expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifies(new Webhook(rotated.secret), during)).toBe(true);
    expect(verifies(new Webhook(oldSecret), during)).toBe(true);

    // The window passes (moved into the past rather than waited for).
    await engine.context.db.execute(
      sql`UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${subId}`,
    );
    const after = await deliveryOf(ok, await propose());
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verifies(new Webhook(rotated.secret), after)).toBe(true);
    expect(verifies(new Webhook(oldSecret), after)).toBe(false);
    await engine.ok(engine.adminToken, `mutation($id: ID!) { deleteWebhookSubscription(id: $id) }`, {
      id: subId,
    });
  });

  it('keeps secrets from before working: Abada URL-safe ones as they are, non-base64 ones flagged for rotation', async () => {
    const bad = await engine.gql(engine.adminToken, CREATE, {
      input: { url: legacy.url(), events: ['approval.opened'], secret: 'a-secret-of-my-own-choosing' },
    });
    expect(codeOf(bad)).toBe('VALIDATION_FAILED');
    expect(bad.errors?.[0].message).toContain('standard base64');
    const unpadded = await engine.gql(engine.adminToken, CREATE, {
      input: {
        url: legacy.url(),
        events: ['approval.opened'],
        secret: `whsec_${Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '')}`,
      },
    });
    expect(codeOf(unpadded)).toBe('VALIDATION_FAILED');
    expect(unpadded.errors?.[0].message).toContain('padded');

    // Two subscriptions as an earlier release stored them.
    // one that only URL-safe base64 can be (with - or _), as every earlier generated secret could be
    let urlSafe = '';
    while (!/[-_]/.test(urlSafe.slice('whsec_'.length)))
      urlSafe = `whsec_${randomBytes(32).toString('base64url')}`;
    const chosen = 'a-secret-of-my-own-choosing';
    expect(keyOf(urlSafe).kind).toBe('generated-url-safe');
    const { sealer, db } = engine.context;
    for (const secret of [urlSafe, chosen]) {
      await db.insert(webhookSubscriptions).values({
        projectId: 'default',
        url: `${legacy.url()}?${secret === chosen ? 'chosen' : 'generated'}`,
        events: ['approval.opened'],
        secretEnc: sealer.seal(secret),
        keyId: sealer.currentKeyId,
      });
    }
    const subs = (await engine.ok(engine.adminToken, SUBSCRIPTIONS)).webhookSubscriptions;
    expect(subs.map((s: { secretNeedsRotation: boolean }) => s.secretNeedsRotation).sort()).toEqual([
      false,
      true,
    ]);

    const instanceId = await propose();
    await waitFor('both deliveries', async () => legacy.got.length >= 2);
    const [a, b] = legacy.got.filter((g) => JSON.parse(g.body).data.processInstanceId === instanceId);
    // The docs' recipe: the same key in the standard alphabet.
    const standardForm = `whsec_${Buffer.from(urlSafe.slice(6), 'base64url').toString('base64')}`;
    const generatedWh = new Webhook(standardForm);
    const chosenWh = new Webhook(chosen, { format: 'raw' });
    expect([a, b].filter((d) => verifies(generatedWh, d))).toHaveLength(1);
    expect([a, b].filter((d) => verifies(chosenWh, d))).toHaveLength(1);
  });

  it('disables a subscription whose endpoint answers 410 Gone', async () => {
    const created = (
      await engine.ok(engine.adminToken, CREATE, { input: { url: gone.url(), events: ['approval.opened'] } })
    ).createWebhookSubscription;
    await deliveryOf(gone, await propose());
    const sub = await waitFor('the subscription disabled', async () => {
      const s = (await engine.ok(engine.adminToken, SUBSCRIPTIONS)).webhookSubscriptions.find(
        (x: { id: string }) => x.id === created.subscription.id,
      );
      return s.active === false && s;
    });
    expect(sub.disabledReason).toContain('410 Gone');
    const [d] = (
      await engine.ok(
        engine.adminToken,
        `query($id: ID) { webhookDeliveries(subscriptionId: $id) {
        state attempts lastStatus } }`,
        { id: created.subscription.id },
      )
    ).webhookDeliveries;
    expect(d).toEqual({ state: 'FAILED', attempts: 1, lastStatus: 410 });
    // A later event is neither queued nor sent to it.
    const later = await propose();
    await deliveryOf(legacy, later); // the dispatcher has run for this event
    expect(gone.got).toHaveLength(1);
  });
});
