/**
 * Revoking from the approval page (SPEC §11): an admin withdraws a waiting refund before anyone decided;
 * the call never runs, the agent reads the reason as a rejection and finishes. (Revoking an approved
 * call is covered against the engine in test/engine/approvals/approvals.revoke.test.ts: here the demo's
 * real worker runs an approved call at once.)
 */
import { expect, test } from '@playwright/test';
import { approvalOf, REAL_WORKER, shot, signIn, simResume, startRefund, URL_ } from './helpers.js';

test('an admin revokes a waiting refund from its page: REVOKED, no refund, the model reads why', async ({
  page,
}) => {
  await signIn(page, 'ada');
  const instanceId = await startRefund();
  const approval = await approvalOf(instanceId);
  await page.goto(`${URL_()}/approvals/${approval.id}`);
  await expect(page.getByTestId('cannot-decide')).toBeVisible();
  // Everything seed 001 §四.3 asks an approver to see (SPEC §11), filled by the engine from the journal.
  await expect(page.getByTestId('impact')).toContainText('Refund 89 EUR to order 5531');
  await expect(page.getByTestId('basis')).toContainText('My parcel 5531 never arrived');
  await expect(page.getByText('risk: high')).toBeVisible();
  await expect(page.getByText('cannot be undone')).toBeVisible();
  if (REAL_WORKER()) {
    // the precondition's read at proposal time: the order as the CRM showed it
    await expect(page.getByTestId('facts')).toContainText('"status": "lost_parcel"');
    await expect(page.getByTestId('facts')).toContainText('"refundedAmount": 0');
  }
  await expect(page.getByTestId('version')).toContainText('version 1');
  await expect(page.getByTestId('validity')).toContainText('else a new version is asked');
  await expect(page.getByTestId('on-approval')).toContainText(
    'Right before, the worker reads crm/get_order and the call runs only if',
  );
  await expect(page.getByTestId('on-approval')).toContainText('it first asks crm/find_refund');

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
