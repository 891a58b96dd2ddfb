/**
 * The admin's principals page: only admins see it in the navigation; an admin edits a person's groups,
 * rotates the token (shown once; the old one stops) and disables the principal (its token stops). It
 * fits a 390 px screen.
 */
import { randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { ADMIN, gql, ok, shot, signIn, URL_ } from './helpers.js';

const ME = '{ me { id groups } }';

test('an admin edits, rotates and disables a principal from the dashboard', async ({ page }) => {
  const name = `e2e-${randomBytes(3).toString('hex')}`;
  const made = await ok(
    ADMIN(),
    'mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }',
    { i: { kind: 'HUMAN', name, groups: ['support'] } },
  );
  const oldToken = made.createPrincipal.token as string;

  await signIn(page, 'ada');
  await page.getByRole('link', { name: 'Principals' }).click();
  const card = page.locator(`li[data-principal="${name}"]`);
  await expect(card).toContainText('enabled');

  await card.getByRole('button', { name: 'Edit groups' }).click();
  await card.getByLabel(/Groups/).fill('support, finance');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(card.getByTestId('members')).toHaveText('support, finance');
  expect((await ok(oldToken, ME)).me.groups).toEqual(['support', 'finance']);

  await card.getByRole('button', { name: 'Rotate token…' }).click();
  await card.getByRole('button', { name: 'Rotate token', exact: true }).click();
  const newToken = (await card.getByTestId('new-token').textContent())?.trim() ?? '';
  expect(newToken).toMatch(/^abada_/);
  expect((await gql(oldToken, ME)).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  expect((await ok(newToken, ME)).me.groups).toEqual(['support', 'finance']);
  await card.getByRole('button', { name: 'Done' }).click();

  await card.getByRole('button', { name: 'Disable…' }).click();
  await card.getByRole('button', { name: `Disable ${name}` }).click();
  await expect(card.locator('.badge.state-disabled')).toBeVisible();
  const refused = await gql(newToken, ME);
  expect(refused.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  expect(refused.errors?.[0].message).toContain('was disabled');
  await expect(card.getByRole('button', { name: 'Disable…' })).toHaveCount(0);
});

test('the principals page is for admins only and fits a 390 px screen', async ({ page }) => {
  await signIn(page, 'fiona');
  await expect(page.getByRole('link', { name: 'Approvals' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Principals' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Sign out' }).click();
  // sign-out ends at the provider and comes back: only then does the next person sign in
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(page).toHaveURL(`${URL_()}/`);

  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, 'ada');
  await page.goto(`${URL_()}/principals`);
  await expect(page.locator('li[data-principal="fiona"]')).toBeVisible();
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(await overflow()).toBeLessThanOrEqual(1);
  await shot(page, 'principals-390');
});
