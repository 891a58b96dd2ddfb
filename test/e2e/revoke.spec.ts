/**
 * Revoking from the approval page (SPEC §11): an admin withdraws a waiting refund before anyone decided;
 * the call never runs, the agent reads the reason as a rejection and finishes. (Revoking an approved
 * call is covered against the engine in test/engine/approvals/approvals.revoke.test.ts: here the demo's
 * real worker runs an approved call at once.)
 */
import { expect, test } from '@playwright/test';
import { approvalOf, shot, signIn, simResume, startRefund, URL_ } from './helpers.js';

test('an admin revokes a waiting refund from its page: REVOKED, no refund, the model reads why', async ({
  page,
}) => {
  await signIn(page, 'ada');
  const instanceId = await startRefund();
  const approval = await approvalOf(instanceId);
  await page.goto(`${URL_()}/approvals/${approval.id}`);
  await expect(page.getByTestId('cannot-decide')).toBeVisible();

  const revoke = page.getByRole('button', { name: 'Revoke' });
  await expect(revoke).toBeDisabled();
  const reason = 'The customer found the parcel this morning.';
  await page.getByLabel('Revoke before the call runs').fill(reason);
  await revoke.click();
  await expect(page.getByTestId('decided')).toContainText('Revoked', { timeout: 15_000 });
  await expect(page.getByTestId('decided')).toContainText(reason);
  await shot(page, 'approval-revoked');
  await simResume();

  await page.goto(`${URL_()}/instances/${instanceId}`);
  const rejected = page.locator('li.msg.tool[data-step="TOOL_CALL:crm/refund:REJECTED"]');
  await expect(rejected).toBeVisible({ timeout: 30_000 });
  await expect(rejected).toContainText(`Withdrawn by ada: ${reason}`);
  await expect(page.getByTestId('instance-state')).toContainText('completed', { timeout: 30_000 });
});
