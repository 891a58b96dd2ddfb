/** Accessibility and theme helpers for the specs: axe (serious/critical fail), light + dark screenshots. */
import { AxeBuilder } from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';
import { shot } from './helpers.js';

/** No serious or critical axe violation on the page as it is now. */
export async function noSeriousViolations(page: Page, label: string) {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(' | ')}`,
    );
  expect(bad, `${label}: axe violations`).toEqual([]);
}

/** Screenshots of the page in the light and the dark theme (prefers-color-scheme), back to light after. */
export async function shots(page: Page, name: string) {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** The count of approvals waiting for me, read from the tab title ("(2) Approvals — Abada"). */
export async function titleCount(page: Page): Promise<number> {
  const m = /^\((\d+)\)/.exec(await page.title());
  return m ? Number(m[1]) : 0;
}
