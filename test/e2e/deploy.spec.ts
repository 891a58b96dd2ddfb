/** A broken definition is refused and its error is marked at its line in the editor (admins only). */
import { expect, test } from '@playwright/test';
import { noSeriousViolations, shots } from './a11y.js';
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

test('deploying a broken YAML marks its error at the line in the editor', async ({ page }) => {
  await signIn(page, 'ada');
  await page.goto(`${URL_()}/definitions`);
  const editor = page.getByLabel(/APL source/);
  await editor.fill(BROKEN);
  await page.getByRole('button', { name: 'Validate and deploy' }).click();
  await expect(page.getByTestId('deploy-errors')).toContainText('line 9');
  await expect(page.getByTestId('deploy-errors')).toContainText('ABADA-APL-TOOL-002');
  // one lint marker in the gutter, on the row of line number 9; the underline is on that line's text
  const marker = page.locator('.cm-lint-marker-error');
  await expect(marker).toHaveCount(1);
  const nine = page.locator('.cm-lineNumbers .cm-gutterElement', { hasText: /^9$/ });
  const [m, n] = [await marker.boundingBox(), await nine.boundingBox()];
  expect(m && n && Math.abs(m.y + m.height / 2 - (n.y + n.height / 2))).toBeLessThan(4);
  await expect(page.locator('.cm-line', { has: page.locator('.cm-lintRange-error') })).toContainText(
    'crm/teleport',
  );
  await noSeriousViolations(page, 'deploy with errors');
  await shots(page, 'deploy-error');

  // after an edit the lines may have moved: the markers go until the next deploy
  await editor.press('End');
  await editor.type(' ');
  await expect(marker).toHaveCount(0);
});
