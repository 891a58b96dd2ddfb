/**
 * Home: the charts' accessible tables carry exactly what the dailyStats field returns, after the test
 * itself opened and decided an approval (Alice's refund, whose model calls cost money) and caused an
 * incident (a worker refused a topic it does not hold). The numbers must have moved by what it did.
 */
import { randomBytes } from 'node:crypto';
import { expect, type Page, test } from '@playwright/test';
import { shots } from './a11y.js';
import { ADMIN, approvalOf, gql, ok, signIn, simResume, startRefund, token, URL_ } from './helpers.js';

const STATS = `{ dailyStats(days: 14) { from to approvals { day opened decided medianDecisionSeconds }
  modelCost { day model costUsd } incidents { day opened } } }`;
type Stats = {
  to: string;
  approvals: { day: string; opened: number; decided: number; medianDecisionSeconds: number | null }[];
  modelCost: { day: string; model: string; costUsd: number }[];
  incidents: { day: string; opened: number }[];
};
const stats = async (): Promise<Stats> => (await ok(token('fiona'), STATS)).dailyStats;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

async function tableRows(page: Page, id: string) {
  const chart = page.getByTestId(`chart-${id}`);
  await chart.locator('summary').click();
  return chart.locator(`[data-testid="values-${id}"] tbody tr[data-day]`);
}

test('the home charts show the values of dailyStats for what this test did', async ({ page }) => {
  const before = await stats();
  // an approval opened and decided, with priced model calls
  const instanceId = await startRefund();
  const a = await approvalOf(instanceId);
  await ok(token('fiona'), 'mutation($i: DecideApprovalInput!) { decideApproval(input: $i) { id } }', {
    i: { approvalId: a.id, decision: 'APPROVE', digest: a.digest },
  });
  await simResume();
  await expect
    .poll(
      async () =>
        (await ok(ADMIN(), 'query($id: ID!) { processInstance(id: $id) { state } }', { id: instanceId }))
          .processInstance.state,
      { timeout: 30_000 },
    )
    .toBe('COMPLETED');
  // an incident: a worker asks for a topic it holds no capability for
  const name = `e2e-w-${randomBytes(3).toString('hex')}`;
  const w = await ok(
    ADMIN(),
    'mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }',
    {
      i: { kind: 'WORKER', name, topics: ['notify'] },
    },
  );
  await gql(w.createPrincipal.token, 'mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) { id } }', {
    i: { workerId: name, maxTasks: 1, topics: [{ topicName: 'abada:agent', lockDurationMs: 1000 }] },
  });

  const after = await stats();
  expect(sum(after.approvals.map((d) => d.opened))).toBe(sum(before.approvals.map((d) => d.opened)) + 1);
  expect(sum(after.approvals.map((d) => d.decided))).toBe(sum(before.approvals.map((d) => d.decided)) + 1);
  expect(sum(after.incidents.map((d) => d.opened))).toBe(sum(before.incidents.map((d) => d.opened)) + 1);
  expect(sum(after.modelCost.map((c) => c.costUsd))).toBeGreaterThan(
    sum(before.modelCost.map((c) => c.costUsd)),
  );

  await signIn(page, 'fiona');
  await page.goto(`${URL_()}/`);
  await expect(page.getByRole('heading', { name: 'What needs you' })).toBeVisible();
  const approvals = await tableRows(page, 'approvals');
  await expect(approvals).toHaveCount(14);
  for (const [i, d] of after.approvals.entries()) {
    const r = approvals.nth(i);
    await expect(r).toHaveAttribute('data-day', d.day);
    await expect(r.locator('[data-col="opened"]')).toHaveText(String(d.opened));
    await expect(r.locator('[data-col="decided"]')).toHaveText(String(d.decided));
    await expect(r.locator('[data-col="median"]')).toHaveAttribute(
      'data-seconds',
      d.medianDecisionSeconds == null ? '' : String(d.medianDecisionSeconds),
    );
  }
  const cost = await tableRows(page, 'cost');
  await expect(cost).toHaveCount(after.modelCost.length);
  for (const [i, c] of after.modelCost.entries()) {
    await expect(cost.nth(i)).toHaveAttribute('data-model', c.model);
    await expect(cost.nth(i).locator('[data-col="cost"]')).toHaveAttribute('data-usd', String(c.costUsd));
  }
  const incidents = await tableRows(page, 'incidents');
  for (const [i, d] of after.incidents.entries()) {
    await expect(incidents.nth(i).locator('[data-col="opened"]')).toHaveText(String(d.opened));
  }
  // the bars are drawn (recharts' SVG), the table is what assistive technology reads
  await expect(page.getByTestId('chart-approvals').locator('svg.recharts-surface').first()).toBeVisible();
  await shots(page, 'home');
});
