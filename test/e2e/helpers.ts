/** What the e2e specs share: the stack's URL and tokens, GraphQL calls, sign-in, and a stand-in worker. */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';
import { createClient } from '../../server/client/index.js';
import type { Untyped } from '../helpers/untyped.js';

export const URL_ = () => process.env.E2E_URL ?? '';
export const ADMIN = () => process.env.E2E_ADMIN_TOKEN ?? '';
export const REAL_WORKER = () => process.env.E2E_REAL_WORKER === '1';
export const token = (name: string): string => JSON.parse(process.env.E2E_TOKENS ?? '{}')[name];

export interface GqlResult<T = Untyped> {
  data: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export async function gql<T = Untyped>(
  tok: string,
  query: string,
  variables?: object,
): Promise<GqlResult<T>> {
  const r = await createClient({ url: URL_(), token: tok }).execute<T>(
    query,
    variables as Record<string, unknown>,
  );
  return r as GqlResult<T>;
}

export async function ok<T = Untyped>(tok: string, query: string, variables?: object): Promise<T> {
  const r = await gql<T>(tok, query, variables);
  if (r.errors?.length) throw new Error(JSON.stringify(r.errors));
  return r.data as T;
}

export const ALICE_ARGS = { orderId: '5531', amount: 89, currency: 'EUR' };

/**
 * Puts the demo CRM back as it started: Alice's order 5531 not refunded yet. The refund's precondition
 * (seed 001) re-reads the order before the call, so a second refund of the same order in one run would
 * rightly be voided; each spec tells the story from the start.
 */
export async function resetCrm() {
  const r = await fetch(`${process.env.E2E_CRM_URL}/control`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'reset' }),
  });
  if (!r.ok) throw new Error(`CRM reset: HTTP ${r.status}`);
}

/** Starts a refund for Alice as the admin (so fiona is not its starter) and returns the instance id. */
export async function startRefund(): Promise<string> {
  await resetCrm();
  const d = await ok(
    ADMIN(),
    'mutation($v: JSON, $b: String) { startProcess(key: "refund", variables: $v, businessKey: $b) { id } }',
    {
      v: { customerId: 'C-42', message: 'My parcel 5531 never arrived' },
      b: `e2e-${randomBytes(4).toString('hex')}`,
    },
  );
  const id = d.startProcess.id as string;
  if (!REAL_WORKER()) await simPropose();
  return id;
}

/** The pending approval of an instance, once the worker has proposed the refund. */
export async function approvalOf(instanceId: string): Promise<{ id: string; digest: string }> {
  let found: { id: string; digest: string } | undefined;
  await expect
    .poll(
      async () => {
        type Pending = { id: string; digest: string; processInstanceId: string };
        const d = await ok<{ approvals: { edges: { node: Pending }[] } }>(
          ADMIN(),
          '{ approvals(state: PENDING, first: 100) { edges { node { id digest processInstanceId } } } }',
        );
        found = d.approvals.edges.map((e) => e.node).find((n) => n.processInstanceId === instanceId);
        return !!found;
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  return found!;
}

export async function signIn(page: Page, name: string) {
  await page.goto(`${URL_()}/approvals`);
  await page.getByRole('button', { name: `Sign in as ${name}` }).click();
  await expect(page.getByTestId('me')).toContainText(name);
}

export async function shot(page: Page, name: string) {
  mkdirSync('test-results/screenshots', { recursive: true });
  await page.screenshot({ path: `test-results/screenshots/${name}.png`, fullPage: true });
}

// ---- a stand-in worker, used only when the repository has no Agent Worker (server/worker) ----------

const W = 'e2e-sim-worker';
const FETCH = `mutation($i: FetchAndLockInput!) { fetchAndLock(input: $i) { id attempt steps { sequence state } } }`;
export const JOURNAL = `mutation($i: JournalStepInput!) { journalStep(input: $i) { taskState } }`;

async function simFetch() {
  const d = await ok(process.env.E2E_WORKER_TOKEN ?? '', FETCH, {
    i: {
      workerId: W,
      maxTasks: 1,
      topics: [{ topicName: 'abada:agent', lockDurationMs: 30_000 }],
      asyncResponseTimeoutMs: 5000,
    },
  });
  return d.fetchAndLock[0] as { id: string; attempt: number; steps: { sequence: number; state: string }[] };
}

async function step(t: { id: string; attempt: number }, sequence: number, s: Record<string, unknown>) {
  await ok(process.env.E2E_WORKER_TOKEN ?? '', JOURNAL, {
    i: { taskId: t.id, workerId: W, attempt: t.attempt, sequence, ...s },
  });
}

/** A model call's journal step (a stand-in worker's, with its fixed hash and usage). */
export const model = (state: string) => ({
  kind: 'MODEL_CALL',
  state,
  model: 'gemini-3.6-flash',
  request: { model: 'gemini-3.6-flash', messagesHash: 'e2e' },
  ...(state === 'COMPLETED'
    ? { response: { role: 'assistant' }, usage: { inputTokens: 100, outputTokens: 20 } }
    : {}),
});
const refund = (state: string, response?: unknown) => ({
  kind: 'TOOL_CALL',
  state,
  toolRef: 'crm/refund',
  request: { callId: 'call_4', arguments: ALICE_ARGS },
  response,
});

async function simPropose() {
  const t = await simFetch();
  await step(t, 1, model('STARTED'));
  await step(t, 1, model('COMPLETED'));
  await step(t, 2, {
    kind: 'TOOL_CALL',
    state: 'COMPLETED',
    toolRef: 'crm/get_customer',
    request: { callId: 'call_2', arguments: { customerId: 'C-42' } },
    response: { name: 'Alice Martin' },
  });
  await step(t, 3, model('STARTED'));
  await step(t, 3, model('COMPLETED'));
  await step(t, 4, refund('PROPOSED'));
}

/** After a decision: resume like a worker would (run the approved call, or read the rejection) and finish. */
export async function simResume() {
  if (REAL_WORKER()) return;
  const t = await simFetch();
  const approved = t.steps.find((s) => s.sequence === 4)?.state === 'APPROVED';
  if (approved) {
    await step(t, 4, refund('STARTED'));
    await step(t, 4, refund('COMPLETED', { refundId: 'R-1001' }));
  }
  await step(t, 5, model('STARTED'));
  await step(t, 5, model('COMPLETED'));
  await ok(
    process.env.E2E_WORKER_TOKEN ?? '',
    'mutation($i: CompleteTaskInput!) { completeTask(input: $i) { id } }',
    {
      i: {
        taskId: t.id,
        workerId: W,
        attempt: t.attempt,
        variables: { outcome: { refunded: approved } },
        metadata: { promptHash: 'a'.repeat(64) },
      },
    },
  );
}
