/** Rejecting needs a comment; with one, the journal shows the rejection and the agent carries on. */
import { expect, test } from '@playwright/test';
import { approvalOf, REAL_WORKER, signIn, simResume, startRefund, URL_ } from './helpers.js';

test('reject is blocked without a comment; with one the journal shows it and the model reads it', async ({
  page,
}) => {
  await signIn(page, 'fiona');
  const instanceId = await startRefund();
  const approval = await approvalOf(instanceId);
  await page.goto(`${URL_()}/approvals/${approval.id}`);

  const reject = page.getByRole('button', { name: 'Reject' });
  await expect(reject).toBeDisabled();
  await expect(page.getByText('To reject, write a comment first')).toBeVisible();
  const reason = 'Already refunded with a gift card on 12 October.';
  await page.getByLabel(/Comment/).fill(reason);
  await expect(reject).toBeEnabled();
  await reject.click();
  await expect(page.getByTestId('decided')).toContainText('rejected by fiona', { timeout: 15_000 });
  await simResume();

  await page.goto(`${URL_()}/instances/${instanceId}`);
  const rejected = page.locator('li.msg.tool[data-step="TOOL_CALL:crm/refund:REJECTED"]');
  await expect(rejected).toBeVisible({ timeout: 30_000 });
  await expect(rejected).toContainText(reason);
  // The agent went on after reading the rejection: another model call, and the instance finished.
  await expect(page.locator('li.msg.model[data-step^="MODEL_CALL"]')).toHaveCount(3, { timeout: 30_000 });
  await expect(page.getByTestId('instance-state')).toContainText('completed', { timeout: 30_000 });
  if (REAL_WORKER()) await expect(page.getByText(/refunded.*false/).first()).toBeVisible();
});
