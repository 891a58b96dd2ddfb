/**
 * Authority by the call (SPEC §14) in the dashboard. A refund tool of our own has rules over its
 * arguments: above 1000 EUR finance, then finance-leads; at or below 20 EUR no person; above 5000 EUR
 * refused; the amount must be positive. A stand-in worker (a principal of its own on a topic of its own,
 * so the demo's Agent Worker never takes the task) proposes 15 EUR (approved by the policy at once),
 * 9000 EUR (refused by policy), 0 EUR (invalid), then 1500 EUR. fran (finance) approves level 1; bea
 * (finance-leads) approves level 2 with the amount changed to 1800, which makes version 2, waiting at
 * level 1 again; fran's late decision on version 1 is refused as stale. fiona opens the approval: the
 * rule, bea's change, who decided which level of which version; her own edits the rules refuse are
 * answered in the form and stay in the fields; she approves version 2. The trace names each rule.
 */
import { expect, type Page, test } from '@playwright/test';
import { noSeriousViolations, noSeriousViolationsEitherTheme, shots } from './a11y.js';
import { ADMIN, approvalOf, gql, JOURNAL, model, ok, signIn, URL_ } from './helpers.js';

const TOPIC = 'e2e-authority';
const TOOLS = `
kind: ToolServer
name: payments
transport: streamable-http
url: ${process.env.E2E_CRM_URL}/mcp
credential: crm-token
tools:
  refund:
    policy: approval_required
    idempotency: key
    editable: true
    approvers: [finance]
    impact: "Refund \${amount} \${currency} to order \${orderId}"
    reversible: false
    risk: high
    validate:
      - { expect: "amount > 0", message: "a refund amount must be greater than 0" }
    approval:
      - { when: "amount > 1000", levels: [finance, finance-leads] }
      - { when: "amount <= 20", auto: true }
      - { when: "amount > 5000", deny: "refunds above 5000 EUR go through the finance desk" }
`;
const PROCESS = `
kind: Process
key: authority-refund
variables: { customerId: { type: string, required: true } }
start: refund
nodes:
  - id: refund
    type: agent
    topic: ${TOPIC}
    model: gemini-3.6-flash
    prompt: Refund what \${customerId} is owed.
    inputs:
      customerId: \${customerId}
    tools: [payments/refund]
    result_variable: outcome
    next: done
  - { id: done, type: end }
`;
const FETCH = `mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) { id attempt steps { sequence state } } }`;
const DECIDE = `mutation($i: DecideApprovalInput!) { decideApproval(input: $i) { id version level state } }`;
const ARGS = (amount: number) => ({ orderId: '7001', amount, currency: 'EUR' });
type Leased = { id: string; attempt: number; steps: { sequence: number; state: string }[] };

async function principal(kind: 'WORKER' | 'HUMAN', name: string, more: object): Promise<string> {
  const d = await ok(
    ADMIN(),
    'mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }',
    {
      i: { kind, name, ...more },
    },
  );
  return d.createPrincipal.token;
}

/** The stand-in worker: leases the task on its topic and journals what a model and its calls did. */
function standIn(worker: string) {
  const lease = async (): Promise<Leased> => {
    const d = await ok(worker, FETCH, {
      i: {
        workerId: 'authority-1',
        maxTasks: 1,
        topics: [{ topicName: TOPIC, lockDurationMs: 30_000 }],
        asyncResponseTimeoutMs: 5000,
      },
    });
    return d.fetchAndLock[0];
  };
  const journal = async (t: Leased, sequence: number, step: Record<string, unknown>) =>
    (
      await ok(worker, JOURNAL.replace('{ taskState }', '{ taskState step { state comment } }'), {
        i: { taskId: t.id, workerId: 'authority-1', attempt: t.attempt, sequence, ...step },
      })
    ).journalStep as { taskState: string; step: { state: string; comment: string | null } };
  const refund = (state: string, amount: number, response?: unknown) => ({
    kind: 'TOOL_CALL',
    state,
    toolRef: 'payments/refund',
    request: { callId: `call_${amount}`, arguments: ARGS(amount) },
    response,
  });
  const turn = async (t: Leased, sequence: number) => {
    await journal(t, sequence, model('STARTED'));
    await journal(t, sequence, model('COMPLETED'));
  };
  return { lease, journal, refund, turn };
}

test('a two-level refund edited at level 2: the rule, the change and who decided which version', async ({
  page,
}) => {
  test.setTimeout(300_000); // three pages at two widths in two themes, each under axe: slow on a busy machine
  const worker = await principal('WORKER', 'authority-worker', { topics: [TOPIC] });
  const fran = await principal('HUMAN', 'fran', { groups: ['finance'] });
  const bea = await principal('HUMAN', 'bea', { groups: ['finance-leads'] });
  await ok(ADMIN(), 'mutation($s: String!) { deploy(source: $s) { definitions { id } } }', {
    s: `${TOOLS}---${PROCESS}`,
  });
  const started = await ok(
    ADMIN(),
    'mutation { startProcess(key: "authority-refund", variables: { customerId: "C-7" }) { id } }',
  );
  const instanceId = started.startProcess.id as string;

  // The rules answer three proposals at once; the fourth waits for people.
  const w = standIn(worker);
  const t = await w.lease();
  await w.turn(t, 1);
  expect((await w.journal(t, 2, w.refund('PROPOSED', 15))).step.state).toBe('APPROVED');
  await w.journal(t, 2, w.refund('STARTED', 15));
  await w.journal(t, 2, w.refund('COMPLETED', 15, { refundId: 'R-15' }));
  await w.turn(t, 3);
  expect((await w.journal(t, 4, w.refund('PROPOSED', 9000))).step.comment).toMatch(/^Refused by policy: /);
  await w.turn(t, 5);
  expect((await w.journal(t, 6, w.refund('PROPOSED', 0))).step.comment).toMatch(/^Invalid arguments: /);
  await w.turn(t, 7);
  expect((await w.journal(t, 8, w.refund('PROPOSED', 1500))).taskState).toBe('AWAITING_APPROVAL');

  const v1 = await approvalOf(instanceId);
  await ok(fran, DECIDE, { i: { approvalId: v1.id, decision: 'APPROVE', digest: v1.digest } });
  const edited = await ok(bea, DECIDE, {
    i: {
      approvalId: v1.id,
      decision: 'APPROVE',
      digest: v1.digest,
      arguments: ARGS(1800),
      comment: 'The customer also paid 300 EUR for shipping.',
    },
  });
  expect(edited.decideApproval).toMatchObject({ version: 2, level: 1, state: 'PENDING' });
  // fran decides again on what she saw before bea's change: refused, and kept as evidence
  const stale = await gql(fran, DECIDE, { i: { approvalId: v1.id, decision: 'APPROVE', digest: v1.digest } });
  expect(stale.errors?.[0]?.extensions?.code).toBe('STALE_DIGEST');

  await signIn(page, 'fiona');
  await page.goto(`${URL_()}/approvals/${v1.id}`);
  await expect(page.getByTestId('rule')).toHaveText('Rule 1: amount > 1000 → finance, then finance-leads');
  await expect(page.getByTestId('version')).toContainText('version 2');
  const change = page.getByTestId('version-change');
  await expect(change).toContainText('bea approved version 1 with changes');
  await expect(change.getByTestId('version-diff').locator('tbody tr')).toHaveText([/amount\s*1500\s*1800/]);
  const levels = page.getByTestId('levels');
  await expect(cell(page, 1, 1)).toHaveText('fran approved');
  await expect(cell(page, 1, 2)).toHaveText('waiting');
  await expect(cell(page, 2, 1)).toHaveText('not decided');
  await expect(cell(page, 2, 2)).toHaveText('bea approved with changes');
  await expect(levels.locator('tbody th')).toHaveText(['1 · finance', '2 · finance-leads']);
  const history = page.getByTestId('decision-history');
  await expect(history.locator('li[data-outcome="STALE_DIGEST"]')).toContainText(
    'refused fran tried to approve at level 1 of version 2 — the call had changed since they opened it',
  );
  await expect(page.getByTestId('versions')).toContainText('Version 1 — as the agent proposed it');
  await look(page, 'authority-approval');

  // fiona's own changes, refused by the rules: the engine's words in the form, her values kept
  await page.getByRole('button', { name: 'Change the arguments' }).click();
  const amount = page.getByLabel('amount', { exact: true });
  await expect(amount).toHaveValue('1800');
  await amount.fill('9000');
  await expect(page.getByTestId('my-changes')).toContainText('amount 1800 → 9000');
  await page.getByRole('button', { name: 'Approve with changes' }).click();
  const refusal = page.getByRole('alert').filter({ hasText: 'Refused by policy' });
  await expect(refusal).toContainText(
    'Refused by policy: refunds above 5000 EUR go through the finance desk',
  );
  await expect(page.getByRole('form', { name: 'Decision' })).toHaveAttribute(
    'aria-describedby',
    'decide-error',
  );
  await expect(amount).toHaveValue('9000');
  await expect(amount).toHaveAttribute('aria-invalid', 'true');
  await amount.fill('-5');
  await page.getByRole('button', { name: 'Approve with changes' }).click();
  await expect(page.getByTestId('decide-error')).toContainText('a refund amount must be greater than 0');
  await expect(page.getByTestId('decide-error')).toHaveAttribute('data-code', 'INVALID_ARGUMENTS');
  await expect(amount).toHaveValue('-5');
  await look(page, 'authority-refused');

  // she discards her changes and approves version 2 as bea made it: every level has decided it
  await page.getByRole('button', { name: 'Discard my changes' }).click();
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await expect(page.getByTestId('decided')).toContainText('approved by fiona', { timeout: 15_000 });
  await expect(cell(page, 1, 2)).toHaveText('fiona approved');
  await expect(history.locator('li[data-outcome="POLICY_DENIED"]')).toContainText(
    'their changes were refused by policy',
  );
  await expect(history.locator('li[data-outcome="INVALID_ARGUMENTS"]')).toContainText('not valid arguments');

  // The worker runs version 2 (1800 EUR, bea's arguments) and finishes.
  const again = await w.lease();
  expect(again.steps.find((s) => s.sequence === 8)?.state).toBe('APPROVED');
  await w.journal(again, 8, w.refund('STARTED', 1800));
  await w.journal(again, 8, w.refund('COMPLETED', 1800, { refundId: 'R-1800' }));
  await w.turn(again, 9);
  await ok(worker, 'mutation($i: CompleteTaskInput!) { completeTask(input: $i) { id } }', {
    i: {
      taskId: again.id,
      workerId: 'authority-1',
      attempt: again.attempt,
      variables: { outcome: { refunded: 1815 } },
      metadata: { promptHash: 'a'.repeat(64) },
    },
  });

  // The trace names the rule on each call the policy answered.
  await page.goto(`${URL_()}/instances/${instanceId}`);
  await expect(page.getByTestId('instance-state')).toContainText('completed', { timeout: 30_000 });
  const steps = page.locator('[data-testid="conversation"] li.msg.tool');
  await expect(steps).toHaveCount(4);
  await expect(steps.nth(0).getByTestId('policy-badge')).toHaveText('auto-approved · rule 2: amount <= 20');
  await expect(steps.nth(0).getByTestId('step-decisions')).toContainText(
    'policy — auto-approved · rule 2: amount <= 20 (version 1)',
  );
  await expect(steps.nth(1).getByTestId('policy-badge')).toHaveText(
    'refused by policy · rule 3: amount > 5000',
  );
  await expect(steps.nth(1).getByTestId('engine-refusal')).toContainText(
    'Refused by policy: refunds above 5000 EUR go through the finance desk',
  );
  await expect(steps.nth(2).getByTestId('policy-badge')).toHaveText('invalid arguments');
  await expect(steps.nth(2).getByTestId('engine-refusal')).toContainText(
    'a refund amount must be greater than 0',
  );
  await expect(steps.nth(3).getByTestId('step-decisions')).toContainText(
    'bea — approved level 2 of 2 with changes, on version 2',
  );
  // the policy answered the 15 EUR call within its proposal: nobody was waited for
  const bars = page.locator('[data-testid="waterfall"] li[data-step="TOOL_CALL:payments/refund:COMPLETED"]');
  await expect(bars.first()).toHaveAttribute('data-wait', '');
  await expect(bars.last()).toHaveAttribute('data-wait', 'person');
  const timeline = page.getByTestId('timeline');
  await expect(timeline.locator('li[data-event="APPROVAL_AUTO"]')).toContainText(
    'auto-approved · rule 2: amount <= 20 (version 1)',
  );
  await expect(timeline.locator('li[data-event="POLICY_DENIED"]')).toContainText(
    'refused by policy · rule 3: amount > 5000',
  );
  await expect(timeline.locator('li[data-event="ARGUMENTS_INVALID"]')).toContainText(
    'invalid arguments · failed validate check 1',
  );
  await expect(timeline.locator('li[data-event="APPROVAL_DECISION_REFUSED"]').first()).toContainText(
    'approve refused: stale digest',
  );
  await page.getByText(/^History \(\d+ events\)$/).click();
  await page.getByText(/^Tasks and their journals/).click();
  await look(page, 'authority-instance');

  // The auto-approved call's own approval names its rule.
  await steps.nth(0).getByRole('link', { name: 'the approval of this call' }).click();
  await expect(page.getByTestId('decided')).toHaveText(
    'Approved by the policy: rule 2 (amount <= 20, auto) — no person was asked',
  );
  await expect(page.getByTestId('rule')).toHaveText('Rule 2: amount <= 20 → runs without a person (auto)');
  await expect(page.getByText('No person decided: an auto rule approved the call.')).toBeVisible();
  await noSeriousViolations(page, 'an auto-approved call');
  await shots(page, 'authority-auto');
});

/** The cell of a level (row) and a version (column) in the level-by-version table. */
const cell = (page: Page, level: number, version: number) =>
  page.getByTestId('levels').locator(`tr[data-level="${level}"] td[data-version="${version}"]`);

/** axe and screenshots, light and dark, at 1280 and at 390 px (where nothing may scroll sideways). */
async function look(page: Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await noSeriousViolationsEitherTheme(page, `${name} ${width}`);
    if (width === 390) {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(1);
    }
    await shots(page, width === 390 ? `${name}-390` : name);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
