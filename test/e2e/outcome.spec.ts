/**
 * An operator settles a keyless write whose outcome is unknown, from the dashboard (SPEC §4, guarantee 3
 * of docs/guarantees.md). A worker journals `crm/send_email` STARTED and loses its lease before the
 * answer came; the next fetch settles the step OUTCOME_UNKNOWN and opens a TOOL_OUTCOME_UNKNOWN incident
 * instead of handing the task out. The operator reads the hint, states that the e-mail went out and what
 * the CRM returned; the task reopens and the next worker reads that statement as the call's result.
 * The worker here is a principal of its own on a topic of its own, so the demo's Agent Worker never
 * takes the task.
 */
import { randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { noSeriousViolations, shots } from './a11y.js';
import { ADMIN, JOURNAL, model, ok, signIn, URL_ } from './helpers.js';

const TOPIC = `e2e-ops-${randomBytes(3).toString('hex')}`;
const KEY = `ops-email-${randomBytes(3).toString('hex')}`;
const PROCESS = `
kind: Process
key: ${KEY}
variables: { customerId: { type: string, required: true } }
start: write
nodes:
  - id: write
    type: agent
    topic: ${TOPIC}
    model: gemini-3.6-flash
    prompt: Tell \${customerId} their parcel is on its way.
    inputs:
      customerId: \${customerId}
    tools: [crm/send_email]
    result_variable: sent
    max_attempts: 2
    next: done
  - { id: done, type: end }
`;
const FETCH = `mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) {
  id attempt steps { sequence state response } } }`;
const INCIDENTS = `query($s: IncidentState) { incidents(state: $s, first: 100) {
  edges { node { type processInstanceId sequence resolution } } } }`;
const MAIL = { to: 'alice@example.com', subject: 'Your parcel', body: 'It is on its way.' };

type Incidents = {
  incidents: {
    edges: {
      node: { type: string; processInstanceId: string; sequence: number; resolution: unknown };
    }[];
  };
};
type Leased = {
  id: string;
  attempt: number;
  steps: { sequence: number; state: string; response: unknown }[];
};

test('an operator states that a keyless e-mail went out; the next worker reads it as the result', async ({
  page,
}) => {
  const created = await ok(
    ADMIN(),
    'mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }',
    { i: { kind: 'WORKER', name: `ops-worker-${TOPIC}`, topics: [TOPIC] } },
  );
  const worker = created.createPrincipal.token as string;
  await ok(ADMIN(), 'mutation($s: String!) { deploy(source: $s) { definitions { id } } }', { s: PROCESS });
  const start = await ok(
    ADMIN(),
    'mutation($k: String!, $v: JSON) { startProcess(key: $k, variables: $v) { id } }',
    {
      k: KEY,
      v: { customerId: 'C-42' },
    },
  );
  const instanceId = start.startProcess.id as string;
  const fetchTasks = async (workerId: string): Promise<Leased[]> =>
    (
      await ok(worker, FETCH, {
        i: {
          workerId,
          maxTasks: 1,
          topics: [{ topicName: TOPIC, lockDurationMs: 30_000 }],
          asyncResponseTimeoutMs: 3000,
        },
      })
    ).fetchAndLock;
  const journal = (t: Leased, workerId: string, sequence: number, step: Record<string, unknown>) =>
    ok(worker, JOURNAL, { i: { taskId: t.id, workerId, attempt: t.attempt, sequence, ...step } });

  // A worker: one model turn, then the e-mail STARTED, and no answer before its lease lapses.
  const [first] = await fetchTasks('ops-1');
  expect(first).toBeTruthy();
  await journal(first, 'ops-1', 1, model('STARTED'));
  await journal(first, 'ops-1', 1, model('COMPLETED'));
  await journal(first, 'ops-1', 2, {
    kind: 'TOOL_CALL',
    state: 'STARTED',
    toolRef: 'crm/send_email',
    request: { callId: 'call_2', arguments: MAIL },
  });
  // The lease runs out (shortened to 100 ms, as a worker that stopped extending it would let it lapse);
  // the next fetch settles the step instead of handing the task out again.
  await ok(worker, 'mutation($i: ExtendLockInput!) { extendLock(input: $i) { id } }', {
    i: { taskId: first.id, workerId: 'ops-1', attempt: first.attempt, lockDurationMs: 100 },
  });
  await expect
    .poll(async () => (await fetchTasks('ops-2')).length === 0 && (await incident('OPEN')) !== undefined, {
      timeout: 20_000,
      intervals: [1500],
    })
    .toBe(true);

  await signIn(page, 'ada');
  await page.goto(`${URL_()}/incidents`);
  const card = page
    .locator('li.card', { hasText: 'attempt 1, step 2' })
    .filter({ hasText: instanceId.slice(0, 8) });
  await expect(card).toContainText('tool outcome unknown');
  await expect(card).toContainText('look again in a few seconds before answering no');
  const resolve = card.getByRole('button', { name: 'Resolve' });
  await expect(resolve).toBeDisabled();
  await card.getByLabel('Yes, it happened').check();
  await card.getByLabel('What the call returned (JSON, given to the agent)').fill('{"messageId": "M-42"}');
  await card.getByLabel('Comment (required)').fill('The CRM outbox shows it sent at 21:04.');
  await noSeriousViolations(page, 'incidents: an unknown outcome, answered');
  await shots(page, 'incident-outcome-unknown');
  await page.setViewportSize({ width: 390, height: 844 });
  await shots(page, 'incident-outcome-unknown-390');
  await resolve.click();
  await expect(card).toHaveCount(0);

  // The incident keeps who said what; the task is handed out again on the same attempt, with the
  // person's statement (and the CRM's answer they gave) as the e-mail's result: nothing is sent twice.
  const mine = await incident('RESOLVED');
  expect(mine).toMatchObject({
    sequence: 2,
    resolution: { happened: true, by: 'ada', comment: 'The CRM outbox shows it sent at 21:04.' },
  });
  const [again] = await fetchTasks('ops-3');
  expect(again).toMatchObject({ id: first.id, attempt: 1 });
  expect(again.steps.find((s) => s.sequence === 2)).toMatchObject({
    state: 'OUTCOME_UNKNOWN',
    response: { resolvedByPerson: true, happened: true, result: { messageId: 'M-42' } },
  });

  async function incident(state: 'OPEN' | 'RESOLVED') {
    const d = await ok<Incidents>(ADMIN(), INCIDENTS, { s: state });
    return d.incidents.edges
      .map((e) => e.node)
      .find((n) => n.processInstanceId === instanceId && n.type === 'TOOL_OUTCOME_UNKNOWN');
  }
});
