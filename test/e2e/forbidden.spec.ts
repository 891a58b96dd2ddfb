/** A support agent outside the candidate groups cannot open the approval nor decide it: the API refuses. */
import { expect, test } from '@playwright/test';
import { approvalOf, gql, signIn, startRefund, token, URL_ } from './helpers.js';

test('a support agent sees no decide buttons and the API refuses (FORBIDDEN)', async ({ page }) => {
  const instanceId = await startRefund();
  const approval = await approvalOf(instanceId);
  await signIn(page, 'sam');
  await page.goto(`${URL_()}/approvals/${approval.id}`);
  // outside the candidate groups the engine does not show her the approval at all
  await expect(page.getByText(/does not exist, or you cannot see it/)).toBeVisible();
  await expect(page.getByRole('button', { name: 'Approve' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Reject' })).toHaveCount(0);

  const r = await gql(
    token('sam'),
    'mutation($i: DecideApprovalInput!) { decideApproval(input: $i) { id } }',
    { i: { approvalId: approval.id, decision: 'APPROVE', digest: approval.digest } },
  );
  expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
});
