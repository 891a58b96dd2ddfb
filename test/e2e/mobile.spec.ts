/** Readable on a phone: at 390 px wide nothing scrolls sideways on the inbox or an approval. */
import { expect, test } from '@playwright/test';
import { approvalOf, shot, signIn, startRefund, URL_ } from './helpers.js';

test.use({ viewport: { width: 390, height: 844 } });

test('the inbox and an approval fit a 390 px screen', async ({ page }) => {
  const instanceId = await startRefund();
  const approval = await approvalOf(instanceId);
  await signIn(page, 'fiona');
  await expect(page.locator(`tr[data-instance-id="${instanceId}"]`)).toBeVisible();
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(await overflow()).toBeLessThanOrEqual(1);
  await shot(page, 'inbox-390');
  await page.goto(`${URL_()}/approvals/${approval.id}`);
  await expect(page.getByRole('button', { name: 'Approve' })).toBeVisible();
  expect(await overflow()).toBeLessThanOrEqual(1);
  await shot(page, 'approval-detail-390');
});
