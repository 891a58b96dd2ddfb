/** A broken definition is refused and its error is shown at its line. */
import { expect, test } from '@playwright/test';
import { signIn, URL_ } from './helpers.js';

const BROKEN = `kind: Process
key: broken-e2e
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Help.
    tools: [crm/get_customer, crm/teleport]
    result_variable: r
    next: done
  - { id: done, type: end }
`;

test('deploying a broken YAML shows its error at the line', async ({ page }) => {
  await signIn(page, 'ada');
  await page.goto(`${URL_()}/definitions`);
  await page.getByLabel(/APL source/).fill(BROKEN);
  await page.getByRole('button', { name: 'Validate and deploy' }).click();
  const marked = page.locator('ol.source li.has-error');
  await expect(marked.first()).toBeVisible();
  await expect(marked.first()).toHaveAttribute('data-line', '9');
  await expect(marked.first()).toContainText('crm/teleport');
  await expect(marked.first()).toContainText('ABADA-APL-TOOL-002');
  await expect(page.getByTestId('deploy-errors')).toContainText('line 9');
});
