/**
 * The walk, in one browser session: fiona's inbox receives Alice's refund live and the title
 * count rises; the approval shows the customer's message and the model's reason next to the arguments;
 * she approves with the keyboard; the instance trace opens the refund call's request and response and
 * shows the wait for her in the waterfall; the definition page draws the refund process. Screenshots of
 * each page in light and dark.
 */
import { expect, test } from '@playwright/test';
import { shots, titleCount } from './a11y.js';
import { REAL_WORKER, signIn, simResume, startRefund, URL_ } from './helpers.js';

/** A stand-in for the browser's Notification that records what the page asks and shows. */
function recordNotifications() {
  const w = window as unknown as { __asked: number; __shown: string[]; Notification: unknown };
  w.__asked = 0;
  w.__shown = [];
  w.Notification = class {
    static permission = 'default';
    static async requestPermission() {
      w.__asked++;
      (w.Notification as { permission: string }).permission = 'granted';
      return 'granted';
    }
    constructor(title: string) {
      w.__shown.push(title);
    }
  };
}

test('inbox → approval → trace → picture', async ({ page }) => {
  await page.addInitScript(recordNotifications);
  await signIn(page, 'fiona');
  await expect(page.getByTestId('waiting-count')).toBeVisible();
  const before = await titleCount(page);
  // notifications are asked for on a click only: nothing was asked on load
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(0);
  await page.getByTestId('notify-button').click();
  await expect(page.getByTestId('notify-state')).toHaveText('Browser notifications on');
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(1);

  const instanceId = await startRefund();
  const row = page.locator(`tr[data-instance-id="${instanceId}"]`);
  await expect(row).toBeVisible({ timeout: 20_000 });
  await expect.poll(() => titleCount(page)).toBe(before + 1);
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { __shown: string[] }).__shown))
    .toEqual(['Approval: crm / refund']);
  await expect(row.getByTestId('row-impact')).toHaveText('Refund 89 EUR to order 5531');
  await expect(row).toContainText('risk: high');
  await expect(row).toContainText(/min left/);
  // keyboard: j focuses the first row's link
  await page.keyboard.press('j');
  await expect(page.locator('tbody a.row-link').first()).toBeFocused();
  await shots(page, 'walk-inbox');

  await row.getByRole('link', { name: 'crm / refund' }).click();
  await expect(page.getByRole('heading', { name: 'crm / refund' })).toBeVisible();
  await expect(page.getByTestId('input-message')).toHaveText('My parcel 5531 never arrived');
  const said = page.getByTestId('model-text');
  if (REAL_WORKER()) await expect(said).toContainText('never delivered; refunding 89 EUR');
  else await expect(said).toHaveText('The model gave no text.');
  await expect(page.getByTestId('arguments')).toContainText('5531');
  // the model's values are marked in the impact sentence
  await expect(page.getByTestId('impact').locator('mark.from-model[data-argument="amount"]')).toHaveText(
    /^89/,
  );
  // the tool server's own words are labelled as such (or their absence said)
  const description = page.getByTestId('tool-description');
  await expect(description).toContainText(/tool server/);
  if (REAL_WORKER())
    await expect(description.locator('blockquote')).toHaveText(
      'Refund an order. Honours an idempotency key.',
    );
  await expect(page.getByTestId('facts')).toBeVisible();
  await expect(page.getByTestId('you-are')).toContainText('fiona');
  await expect(page.getByTestId('you-are')).toContainText('you may decide');
  await expect(page.getByTestId('time-left')).toContainText(/left/);
  await shots(page, 'walk-approval');

  await page.locator('h1').click(); // focus out of any field: shortcuts never fire while typing
  await page.keyboard.press('Shift+A');
  await expect(page.getByTestId('decided')).toContainText('approved by fiona', { timeout: 15_000 });
  await expect(page.getByTestId('decision-history')).toContainText('fiona approved');
  await simResume();

  await page.getByRole('link', { name: instanceId }).click();
  await expect(page.getByTestId('instance-state')).toContainText('completed', { timeout: 30_000 });
  await expect(page.getByTestId('audit')).toContainText('audit chain verified');
  const call = page.locator('li.msg.tool[data-step="TOOL_CALL:crm/refund:COMPLETED"]');
  await expect(call).toBeVisible();
  await call.locator('summary').click();
  await expect(call.getByTestId('step-request')).toContainText('"orderId": "5531"');
  await expect(call.getByTestId('step-response')).toContainText(/refund/i);
  await expect(call.getByTestId('step-decisions')).toContainText('fiona — approved');
  const bar = page.locator('[data-testid="waterfall"] li[data-step="TOOL_CALL:crm/refund:COMPLETED"]');
  await expect(bar).toHaveAttribute('data-wait', 'person');
  await expect(bar.getByTestId('step-wait')).toContainText('waiting for a person');
  await expect(page.getByTestId('waterfall-totals')).toContainText(/\$0\.\d{4}/);
  const picture = page.getByTestId('process-picture');
  await expect(picture.locator('[data-node="triage"]')).toHaveAttribute('data-visited', 'true');
  await expect(picture.locator('[data-node="done"]')).toHaveAttribute('data-visited', 'true');
  await shots(page, 'walk-instance');

  await page.goto(`${URL_()}/definitions`);
  await page.getByRole('combobox', { name: /^Process/ }).selectOption('refund');
  const def = page.getByTestId('process-picture');
  await expect(def.locator('[data-node="triage"]')).toBeVisible();
  await expect(def.locator('[data-node="done"]')).toBeVisible();
  await expect(def.locator('[data-node="triage"]')).toContainText('crm/refund');
  await expect(def.locator('[data-node="triage"]')).toContainText('approval required');
  // fiona is no admin: no deploy editor
  await expect(page.getByRole('button', { name: 'Validate and deploy' })).toHaveCount(0);
  await shots(page, 'walk-definition');
});
