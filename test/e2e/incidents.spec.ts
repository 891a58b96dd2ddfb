/**
 * A misconfigured worker polls a topic it holds no capability for, again and again: the operator sees
 * one FETCH_REJECTED incident saying how often and when last, not one per poll (SPEC §15.6).
 */
import { randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { ADMIN, gql, ok, shot, signIn, URL_ } from './helpers.js';

test('a worker refused three times is one incident, seen 3 times', async ({ page }) => {
  const name = `e2e-stray-${randomBytes(3).toString('hex')}`;
  const w = await ok(
    ADMIN(),
    'mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }',
    {
      i: { kind: 'WORKER', name, topics: ['notify'] },
    },
  );
  for (let i = 0; i < 3; i++) {
    const r = await gql(
      w.createPrincipal.token,
      'mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) { id } }',
      { i: { workerId: name, maxTasks: 1, topics: [{ topicName: 'ledger', lockDurationMs: 1000 }] } },
    );
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  }

  await signIn(page, 'ada');
  await page.goto(`${URL_()}/incidents`);
  const card = page.locator('li.card', { hasText: `worker ${name}` });
  await expect(card).toHaveCount(1);
  await expect(card).toContainText('fetch rejected');
  await expect(card).toContainText('seen 3 times, last');
  await shot(page, 'incidents-repeated');
  // on a phone, in the dark: the card keeps the line and nothing scrolls sideways
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect(card).toContainText('seen 3 times, last');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(1);
  await shot(page, 'incidents-repeated-390-dark');
});
