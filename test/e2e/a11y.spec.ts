/**
 * axe on every page, light and dark, desktop and 390 px: no serious or critical violation; and at 390 px
 * nothing scrolls sideways. Each page loads once per width and is checked in both themes there. One refund
 * is started and approved so the pages have something to show.
 */
import { expect, type Page, test } from '@playwright/test';
import { noSeriousViolations, noSeriousViolationsEitherTheme } from './a11y.js';
import { approvalOf, ok, shot, signIn, simResume, startRefund, token, URL_ } from './helpers.js';

let approvalId = '';
let instanceId = '';

test.beforeAll(async () => {
  instanceId = await startRefund();
  const a = await approvalOf(instanceId);
  approvalId = a.id;
  await ok(token('fiona'), 'mutation($i: DecideApprovalInput!) { decideApproval(input: $i) { id } }', {
    i: { approvalId: a.id, decision: 'APPROVE', digest: a.digest },
  });
  await simResume();
});

const PAGES = (who: string) =>
  who === 'ada'
    ? ['/definitions', '/principals']
    : [
        '/',
        '/approvals',
        `/approvals/${approvalId}`,
        '/instances',
        `/instances/${instanceId}`,
        '/incidents',
        '/workers',
        '/definitions',
      ];

async function settle(page: Page, path: string) {
  await page.goto(`${URL_()}${path}`);
  await expect(page.locator('main h1').first()).toBeVisible();
  await expect(page.locator('main').getByText('Loading…')).toHaveCount(0);
  if (path.startsWith('/instances/') || path === '/definitions') {
    await expect(page.locator('.flow[data-laid-out="yes"]')).toBeVisible();
  }
}

for (const viewport of [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`every page at ${viewport.width} px, light and dark`, async ({ page }) => {
    // eleven pages, two people, axe on each in both themes: about 40 s on a quiet machine
    test.setTimeout(360_000);
    await page.setViewportSize(viewport);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${URL_()}/approvals`);
    await noSeriousViolationsEitherTheme(page, `sign-in ${viewport.width}`);
    for (const who of ['fiona', 'ada']) {
      // the next person signs in afresh: the dashboard's session is a cookie (and a pasted token in
      // sessionStorage where token sign-in is on)
      await page.context().clearCookies();
      await page.evaluate(() => sessionStorage.clear());
      await page.emulateMedia({ colorScheme: 'light' });
      await signIn(page, who);
      for (const path of PAGES(who)) {
        await settle(page, path);
        await noSeriousViolationsEitherTheme(page, `${who} ${path} ${viewport.width}`);
        if (viewport.width === 390) {
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - window.innerWidth,
          );
          expect(overflow, `${path} scrolls sideways at 390 px`).toBeLessThanOrEqual(1);
          await shot(
            page,
            `390-${who}-${path.split('/')[1] || 'home'}-${path.split('/').length > 2 ? 'detail' : 'list'}`,
          );
        }
        await page.emulateMedia({ colorScheme: 'light' });
      }
    }
  });
}

test('the check itself fails on a planted violation, in either theme', async ({ page }) => {
  // an image without alt text (serious in both themes), and text readable only in the light theme
  await page.setContent(`<!doctype html><html lang="en"><head><title>planted</title><style>
    p { color: #111; background: #fff; } @media (prefers-color-scheme: dark) { p { color: #222; background: #111; } }
  </style></head><body><main><h1>planted</h1><p>low contrast in the dark</p></main></body></html>`);
  await page.emulateMedia({ colorScheme: 'light' });
  await noSeriousViolations(page, 'planted');
  await expect(noSeriousViolationsEitherTheme(page, 'planted')).rejects.toThrow(
    /planted dark: axe violations[\s\S]*color-contrast \(serious\)/,
  );
  await page.evaluate(() => document.querySelector('main')!.append(document.createElement('img')));
  await page.emulateMedia({ colorScheme: 'light' });
  await expect(noSeriousViolations(page, 'planted image')).rejects.toThrow(/image-alt \(critical\)/);
});
