/**
 * SPEC §12 in the browser: fiona signs in through the demo OpenID Provider's own login page (typing her
 * password, not the one-click button), approves Alice's refund, signs out (here and at the provider),
 * and the back button shows no data: the pages she saw ask the engine again and find no session.
 */
import { expect, test } from '@playwright/test';
import { approvalOf, shot, simResume, startRefund, URL_ } from './helpers.js';

test('fiona signs in with the OpenID Provider, approves Alice’s refund, signs out, and back shows nothing', async ({
  page,
}) => {
  const instanceId = await startRefund();
  const approval = await approvalOf(instanceId);

  await page.goto(`${URL_()}/approvals`);
  await page.getByRole('link', { name: 'Sign in with your organisation' }).click();
  await expect(page.getByRole('heading', { name: 'Demo identity provider' })).toBeVisible();
  await page.getByLabel('Username').fill('fiona');
  await page.getByLabel('Password').fill('demo');
  await shot(page, 'provider-login');
  await page.getByRole('button', { name: 'Sign in' }).click();

  await expect(page).toHaveURL(`${URL_()}/approvals`);
  await expect(page.getByTestId('me')).toContainText('fiona');
  await expect(page.getByTestId('me')).toContainText('finance-leads');
  const row = page.locator(`tr[data-instance-id="${instanceId}"]`);
  await row.getByRole('link', { name: 'crm / refund' }).click();
  await expect(page.getByTestId('digest')).toHaveText(approval.digest);
  await page.getByRole('button', { name: 'Approve' }).click();
  // fiona's approval; when an earlier spec already refunded order 5531 in the shared demo CRM, the
  // worker's precondition read (SPEC §11) then voids it: either way the decision is hers
  await expect(page.getByTestId('decided')).toContainText(/(approved|voided) by fiona/, { timeout: 15_000 });
  await simResume();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(page).toHaveURL(`${URL_()}/`);
  await page.goBack();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(page.getByTestId('me')).toHaveCount(0);
  await expect(page.getByTestId('digest')).toHaveCount(0);
  await expect(page.getByText('5531')).toHaveCount(0);
  await shot(page, 'signed-out-back');
  // the session is gone on the server too
  const session = await page.evaluate(() => fetch('/auth/session').then((r) => r.json()));
  expect(session.signedIn).toBe(false);
});
