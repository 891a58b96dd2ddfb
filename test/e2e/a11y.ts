/** Accessibility and theme helpers for the specs: axe (serious/critical fail), light + dark screenshots. */
import { AxeBuilder } from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';
import { shot } from './helpers.js';

/**
 * The axe rules that read colours. The dark theme changes colours only (the `prefers-color-scheme: dark`
 * block of web/app/globals.css; test/web/dark-scheme.test.ts keeps it so), so in the dark scheme these
 * are the rules that can answer differently from the light one on the same page.
 */
const COLOUR_RULES = ['color-contrast', 'link-in-text-block'];

/**
 * No serious or critical axe violation on the page as it is now (of `rules` only, when given). axe runs
 * in one call in the page (legacy mode: the default opens a blank page to merge per-frame results, which
 * cost more than the rules) and reports violations only; the dashboard has no frames, asserted here so a
 * frame added later is not silently left out.
 */
export async function noSeriousViolations(page: Page, label: string, rules?: string[]) {
  expect(page.frames(), `${label}: a frame axe would not enter in one call`).toHaveLength(1);
  const axe = new AxeBuilder({ page }).setLegacyMode(true).options({ resultTypes: ['violations'] });
  if (rules) axe.withRules(rules);
  const r = await axe.analyze();
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

/**
 * axe on the page in both themes: every rule in the light one, the colour rules in the dark one. Leaves
 * the page dark.
 */
export async function noSeriousViolationsEitherTheme(page: Page, label: string) {
  await page.emulateMedia({ colorScheme: 'light' });
  await noSeriousViolations(page, `${label} light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await noSeriousViolations(page, `${label} dark`, COLOUR_RULES);
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
