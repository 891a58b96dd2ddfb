/**
 * Seed 000 in the dashboard: fiona (finance lead) has the inbox open; a refund proposed after the page
 * loaded appears live; she approves the exact digest; the worker resumes and the instance page shows the
 * refund COMPLETED and the process finished.
 */
import { expect, test } from '@playwright/test';
import { shot, signIn, simResume, startRefund } from './helpers.js';

test('a finance lead sees a new refund arrive live, approves it, and the process finishes', async ({
  page,
}) => {
  await signIn(page, 'fiona');
  await expect(page.getByRole('heading', { name: 'Approvals' })).toBeVisible();
  const loadedAt = await page.evaluate(() => performance.timeOrigin);

  const instanceId = await startRefund();
  const row = page.locator(`tr[data-instance-id="${instanceId}"]`);
  await expect(row).toBeVisible({ timeout: 20_000 });
  await expect(row).toContainText('crm / refund');
  await expect(row.locator('.badge.new')).toBeVisible();
  await expect(page.getByTestId('live-notice')).toContainText('New approval: crm / refund');
  await expect(row).toContainText(/h \d+ min left/);
  // the row says what the call does and how risky it is (seed 001 §四.3)
  await expect(row.getByTestId('row-impact')).toHaveText('Refund 89 EUR to order 5531');
  await expect(row).toContainText('risk: high');
  await expect(row).toContainText('cannot be undone');
  // no reload happened: the document is the one loaded before the refund was proposed
  expect(await page.evaluate(() => performance.timeOrigin)).toBe(loadedAt);
  await shot(page, 'inbox');

  await row.getByRole('link', { name: 'crm / refund' }).click();
  await expect(page.getByRole('heading', { name: 'crm / refund' })).toBeVisible();
  const args = page.getByTestId('arguments');
  await expect(args).toContainText('orderId');
  await expect(args).toContainText('5531');
  await expect(args).toContainText('89');
  await expect(page.getByTestId('digest')).toHaveText(/^[0-9a-f]{64}$/);
  await expect(page.getByText('finance-leads').first()).toBeVisible();
  // seed 001 §四.3: what the call does, its risk and whether it can be undone, from the definition
  await expect(page.getByTestId('impact')).toContainText('Refund 89 EUR');
  await expect(page.getByTestId('impact')).toContainText('risk: high');
  await expect(page.getByTestId('impact')).toContainText('cannot be undone');
  // why the agent asks: the customer's message and what it looked up before, from the journal
  await expect(page.getByTestId('input-message')).toHaveText('My parcel 5531 never arrived');
  await expect(page.getByTestId('basis')).toContainText('crm/get_customer');
  await expect(page.getByTestId('on-approval')).toContainText(
    /once, with idempotency key abada-[0-9a-f]{40}/,
  );
  await shot(page, 'approval-detail');

  await page.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByTestId('decided')).toContainText('approved by fiona', { timeout: 15_000 });
  await simResume();

  await page.getByRole('link', { name: instanceId }).click();
  await expect(page.locator('li.msg.tool[data-step="TOOL_CALL:crm/refund:COMPLETED"]')).toBeVisible({
    timeout: 30_000,
  });
  await expect(page.getByTestId('instance-state')).toContainText('completed', { timeout: 30_000 });
  await expect(page.getByTestId('audit')).toContainText('audit chain verified');
  await expect(page.getByTestId('timeline')).toContainText('approval');
  await shot(page, 'instance-timeline');
});
