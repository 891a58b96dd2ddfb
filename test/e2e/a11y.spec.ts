/**
 * axe on every page, light and dark, desktop and 390 px: no serious or critical violation; and at 390 px
 * nothing scrolls sideways. One refund is started and approved so the pages have something to show.
 */
import { expect, type Page, test } from '@playwright/test';
import { noSeriousViolations } from './a11y.js';
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
  for (const scheme of ['light', 'dark'] as const) {
    test(`every page at ${viewport.width} px, ${scheme}`, async ({ page }) => {
      // ten pages, two people, axe on each: about 40 s on a quiet machine, over 3 min on a loaded one
      test.setTimeout(360_000);
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${URL_()}/approvals`);
      await noSeriousViolations(page, `sign-in ${scheme} ${viewport.width}`);
      for (const who of ['fiona', 'ada']) {
        // the next person signs in afresh: the dashboard's session is a cookie (and a pasted token in
        // sessionStorage where token sign-in is on)
        await page.context().clearCookies();
        await page.evaluate(() => sessionStorage.clear());
        await signIn(page, who);
        for (const path of PAGES(who)) {
          await settle(page, path);
          await noSeriousViolations(page, `${who} ${path} ${scheme} ${viewport.width}`);
          if (viewport.width === 390) {
            const overflow = await page.evaluate(
              () => document.documentElement.scrollWidth - window.innerWidth,
            );
            expect(overflow, `${path} scrolls sideways at 390 px`).toBeLessThanOrEqual(1);
            if (scheme === 'dark')
              await shot(
                page,
                `390-${who}-${path.split('/')[1] || 'home'}-${path.split('/').length > 2 ? 'detail' : 'list'}`,
              );
          }
        }
      }
    });
  }
}
