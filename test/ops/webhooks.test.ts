/**
 * Webhooks end to end: a real local receiver that answers 500 twice, then 200, gets the same event id
 * on every attempt and a signature that verifies with the recipe of docs/webhooks.md; the delivery's
 * state is visible through GraphQL. A receiver that always fails ends FAILED after the configured
 * attempts. Events of a project nobody subscribed to cost one cheap statement and insert nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueWebhooks } from '../../server/engine/events/testing.js';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { Q } from '../helpers/fixtures.js';
import { setupSeeds, WorkerSim } from '../helpers/worker-sim.js';
import { waitFor } from '../helpers/wait.js';

/** The deprecated Abada-Signature recipe of docs/webhooks.md (still sent for one release). */
function verifyAbadaSignature(secret: string, headers: http.IncomingHttpHeaders, rawBody: string): boolean {
  const timestamp = String(headers['abada-timestamp']);
  const signature = String(headers['abada-signature']);
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false; // replayed or stale
  const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

function receiver(answer: (n: number) => number) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(answer(got.length)).end();
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
/** A subscriber-chosen Standard Webhooks secret (whsec_ + base64 of 24 bytes). */
const CHOSEN = `whsec_${Buffer.from('a-secret-of-my-own-choice').toString('base64')}`;
const flaky = receiver((n) => (n <= 2 ? 500 : 200));
const broken = receiver(() => 503);

/**
 * How long "nothing more arrives" is watched after the third, successful delivery: a wrong resend would
 * come at the dispatcher's next poll (ABADA_WEBHOOK_POLL_MS 50 below) after at most the third attempt's
 * backoff (40 ms · 2² · 1.25 = 200 ms): 300 ms covers both.
 */
const QUIET_MS = 300;

beforeAll(async () => {
  await Promise.all([flaky.listen(), broken.listen()]);
  engine = await startTestEngine({
    env: { ABADA_WEBHOOK_BACKOFF_MS: '40', ABADA_WEBHOOK_POLL_MS: '50', ABADA_WEBHOOK_MAX_ATTEMPTS: '3' },
  });
});
afterAll(async () => {
  await engine?.close();
  flaky.server.close();
  broken.server.close();
});

const CREATE = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) {
  secret subscription { id url events active } } }`;
const DELIVERIES = `query($id: ID) { webhookDeliveries(subscriptionId: $id) {
  id eventId eventType state attempts lastStatus lastError deliveredAt payload } }`;

describe('webhooks', () => {
  it('retries with backoff, keeps the event id, signs every attempt, and reports the delivery', async () => {
    const { worker } = await setupSeeds(engine);
    const created = (
      await engine.ok(engine.adminToken, CREATE, {
        input: { url: flaky.url(), events: ['approval.opened'] },
      })
    ).createWebhookSubscription;
    expect(created.secret).toMatch(/^whsec_/);
    const mine = (
      await engine.ok(engine.adminToken, CREATE, {
        input: {
          url: broken.url(),
          events: ['approval.opened', 'incident.opened'],
          secret: CHOSEN,
        },
      })
    ).createWebhookSubscription;
    expect(mine.secret).toBeNull();
    const list = await engine.ok(engine.adminToken, `{ webhookSubscriptions { id url events } }`);
    expect(list.webhookSubscriptions).toHaveLength(2);
    expect(JSON.stringify(list)).not.toContain('secret');
    const human = await engine.principal('HUMAN', 'h', { groups: ['finance-leads'] });
    expect((await engine.gql(human, `{ webhookSubscriptions { id } }`)).errors?.[0].extensions?.code).toBe(
      'FORBIDDEN',
    );

    const sim = new WorkerSim(engine, worker, 'hook-sim');
    await engine.ok(engine.adminToken, Q.start, { key: 'refund', v: { customerId: 'C-42' } });
    const task = await sim.fetchOne();
    await sim.model(task, 1, 'STARTED');
    await sim.model(task, 1, 'COMPLETED');
    const proposed = await sim.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89 });

    await waitFor('the webhook delivery', async () => flaky.got.length >= 3);
    await new Promise((r) => setTimeout(r, QUIET_MS)); // nothing more arrives once delivered
    expect(flaky.got).toHaveLength(3);
    const ids = new Set(flaky.got.map((g) => g.headers['abada-event-id']));
    expect(ids.size).toBe(1);
    for (const g of flaky.got) expect(verifyAbadaSignature(created.secret, g.headers, g.body)).toBe(true);
    expect(verifyAbadaSignature('whsec_wrong', flaky.got[0].headers, flaky.got[0].body)).toBe(false);
    const bodies = new Set(flaky.got.map((g) => g.body));
    expect(bodies.size).toBe(1);
    const event = JSON.parse(flaky.got[2].body);
    expect(event).toMatchObject({
      id: [...ids][0],
      type: 'approval.opened',
      data: {
        state: 'PENDING',
        toolRef: 'crm/refund',
        tool: 'refund',
        digest: proposed.step.digest,
        candidateGroups: ['finance-leads'],
        arguments: { orderId: '5531', amount: 89 },
        taskId: task.id,
      },
    });
    expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt);

    const [d] = (await engine.ok(engine.adminToken, DELIVERIES, { id: created.subscription.id }))
      .webhookDeliveries;
    expect(d).toMatchObject({
      eventId: event.id,
      eventType: 'approval.opened',
      state: 'DELIVERED',
      attempts: 3,
      lastStatus: 200,
      lastError: null,
    });

    // The receiver that never answers 2xx: FAILED after ABADA_WEBHOOK_MAX_ATTEMPTS.
    const failed = await waitFor('the webhook delivery', async () => {
      const [f] = (await engine.ok(engine.adminToken, DELIVERIES, { id: mine.subscription.id }))
        .webhookDeliveries;
      return f?.state === 'FAILED' && f;
    });
    expect(failed).toMatchObject({ attempts: 3, lastStatus: 503, lastError: 'HTTP 503' });
    expect(broken.got).toHaveLength(3);
    expect(verifyAbadaSignature(CHOSEN, broken.got[0].headers, broken.got[0].body)).toBe(true);

    expect(
      await engine.ok(engine.adminToken, `mutation($id: ID!) { deleteWebhookSubscription(id: $id) }`, {
        id: mine.subscription.id,
      }),
    ).toEqual({ deleteWebhookSubscription: true });
    expect(
      (await engine.ok(engine.adminToken, DELIVERIES, { id: mine.subscription.id })).webhookDeliveries,
    ).toEqual([]);
  });

  it('costs one statement per event and inserts nothing when nobody subscribed', async () => {
    const db = engine.context.db;
    const before = await db.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries`);
    // Counted, not timed: a time bound per event breaks on a loaded machine and says less.
    let statements = 0;
    const counting = new Proxy(db, {
      get: (target, key, receiver) =>
        key === 'execute'
          ? (...args: Parameters<typeof db.execute>) => {
              statements++;
              return target.execute(...args);
            }
          : Reflect.get(target, key, receiver),
    });
    for (let i = 0; i < 200; i++) {
      await enqueueWebhooks(counting, {
        type: 'approval',
        approvalId: '00000000-0000-0000-0000-000000000000',
        projectId: 'nobody',
        change: 'opened',
      });
    }
    expect(statements).toBe(200);
    const after = await db.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries`);
    expect(after.rows[0]).toEqual(before.rows[0]);
  });
});
