/**
 * The people of the soak, as bots polling through both engines:
 *  - an approver (a HUMAN in finance-leads) who approves most refunds, rejects some with a comment, and
 *    sometimes sends a second decision through the other engine (the first decision must win);
 *  - an admin who cancels some instances while their refund waits for approval;
 *  - an operator who resolves TOOL_OUTCOME_UNKNOWN incidents by checking the CRM's record, and retries
 *    FAILED tasks (TASK_FAILED incidents) a bounded number of times.
 */
import { canonicalJson } from '../server/shared/canonical.js';
import type { CrmServer } from '../server/demo/crm-server.js';
import { unitHash } from './defs.js';
import { codeOf, gql } from './procs.js';

export interface BotStats {
  approved: number;
  rejected: number;
  cancelledWaiting: number;
  secondDecisions: number;
  secondDecisionRefused: number;
  secondDecisionWrong: number;
  unknownResolvedHappened: number;
  unknownResolvedNotHappened: number;
  /** passes that left an unknown outcome open: the call was sent less than SETTLE_MS ago */
  unknownDeferred: number;
  taskRetries: number;
  otherIncidentsResolved: number;
  errors: number;
}

export const newBotStats = (): BotStats => ({
  approved: 0,
  rejected: 0,
  cancelledWaiting: 0,
  secondDecisions: 0,
  secondDecisionRefused: 0,
  secondDecisionWrong: 0,
  unknownResolvedHappened: 0,
  unknownResolvedNotHappened: 0,
  unknownDeferred: 0,
  taskRetries: 0,
  otherIncidentsResolved: 0,
  errors: 0,
});

const PENDING = `query { approvals(state: PENDING, first: 100) { edges { node { id digest processInstanceId taskId } } } }`;
const DECIDE = `mutation($input: DecideApprovalInput!) { decideApproval(input: $input) { id state } }`;
const CANCEL = `mutation($id: ID!, $r: String!) { cancelProcess(id: $id, reason: $r) { id state } }`;
const INCIDENTS = `query { incidents(state: OPEN, first: 100) { edges { node { id type taskId attempt sequence processInstanceId } } } }`;
const TASK = `query($id: ID!) { externalTask(id: $id) { id state steps { attempt sequence toolRef state request createdAt } } }`;
const RESOLVE = `mutation($input: ResolveIncidentInput!) { resolveIncident(input: $input) { id state } }`;
const RETRY = `mutation($id: ID!) { retryTask(id: $id) { id state attempt } }`;

export interface BotContext {
  urls: string[];
  humanToken: string;
  adminToken: string;
  crm: CrmServer;
  stats: BotStats;
  /** Fraction of approvals answered by cancelling the instance instead. */
  cancelShare: number;
  maxRetriesPerTask: number;
  log: (line: string) => void;
}

/**
 * The database is down (a PostgreSQL restart): the engine answered UNAVAILABLE. Not a refusal: the pass
 * stops here and the next one looks again (a decision that did commit is no longer pending then).
 */
function unlessUnavailable(r: Parameters<typeof codeOf>[0], what: string) {
  if (codeOf(r) === 'UNAVAILABLE') throw new Error(`${what}: UNAVAILABLE (database restarting)`);
}

/** Runs `fn` against engine i, falling back to the other on a network error (an engine may be down). */
async function onAny<T>(ctx: BotContext, i: number, fn: (url: string) => Promise<T>): Promise<T> {
  try {
    return await fn(ctx.urls[i % ctx.urls.length]);
  } catch {
    return fn(ctx.urls[(i + 1) % ctx.urls.length]);
  }
}

/** One pass of the approver and the cancelling admin. */
export async function approvalPass(ctx: BotContext, round: number): Promise<void> {
  const r = await onAny(ctx, round, (u) => gql(u, ctx.humanToken, PENDING));
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  for (const { node } of r.data.approvals.edges as {
    node: { id: string; digest: string; processInstanceId: string };
  }[]) {
    const u = unitHash(node.id);
    const url = ctx.urls[round % ctx.urls.length];
    if (u < ctx.cancelShare) {
      const c = await gql(ctx.urls[(round + 1) % ctx.urls.length], ctx.adminToken, CANCEL, {
        id: node.processInstanceId,
        r: 'soak: customer withdrew the request',
      });
      unlessUnavailable(c, 'cancelProcess');
      if (!c.errors) ctx.stats.cancelledWaiting++;
      else if (codeOf(c) !== 'VALIDATION_FAILED') ctx.stats.errors++;
      continue;
    }
    const reject = u > 0.82;
    const input = {
      approvalId: node.id,
      decision: reject ? 'REJECT' : 'APPROVE',
      // Approve without a comment: a comment is appended to the tool's answer, which the script reads.
      comment: reject ? 'Already refunded with a gift card' : null,
      digest: node.digest,
    };
    const d = await gql(url, ctx.humanToken, DECIDE, { input });
    unlessUnavailable(d, 'decideApproval');
    if (d.errors) {
      if (!['ALREADY_DECIDED', 'WORK_RETIRED'].includes(codeOf(d) ?? '')) {
        ctx.stats.errors++;
        ctx.log(`decideApproval ${node.id}: ${JSON.stringify(d.errors)}`);
      }
      continue;
    }
    if (reject) ctx.stats.rejected++;
    else ctx.stats.approved++;
    // Now and then a second approver decides the other way through the other engine: refused.
    if (unitHash(`${node.id}#2`) < 0.2) {
      ctx.stats.secondDecisions++;
      const second = { ...input, decision: reject ? 'APPROVE' : 'REJECT', comment: 'second opinion' };
      const s = await onAny(ctx, round + 1, (x) => gql(x, ctx.humanToken, DECIDE, { input: second }));
      if (codeOf(s) === 'UNAVAILABLE') ctx.stats.secondDecisions--;
      unlessUnavailable(s, 'second decision');
      if (codeOf(s) === 'ALREADY_DECIDED' || codeOf(s) === 'WORK_RETIRED') ctx.stats.secondDecisionRefused++;
      else ctx.stats.secondDecisionWrong++;
    }
  }
}

interface StepView {
  attempt: number;
  sequence: number;
  toolRef: string | null;
  state: string;
  request: { arguments?: Record<string, unknown> } | null;
  /** when the step was journaled STARTED, i.e. before the call was sent */
  createdAt: string;
}

/*
 * The operator says a call did not happen only once it was sent SETTLE_MS ago or more. A worker killed
 * just after writing its request leaves that request in flight: on a loaded machine the CRM may read it
 * seconds later, after the lease lapsed and the incident opened. An operator who looked at once would
 * say "did not happen" about an e-mail that then arrives, and the agent would send it again. That is the
 * person's wrong statement (docs/guarantees.md, limits of guarantee 3), not the engine's re-send, but the
 * keyless row would count it. A call the CRM shows is said to have happened at once.
 */
export const SETTLE_MS = 8_000;

const retries = new Map<string, number>();

/** One pass of the operator over open incidents. */
export async function incidentPass(ctx: BotContext, round: number): Promise<void> {
  const r = await onAny(ctx, round, (u) => gql(u, ctx.adminToken, INCIDENTS));
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  const url = ctx.urls[round % ctx.urls.length];
  for (const { node } of r.data.incidents.edges as {
    node: { id: string; type: string; taskId: string | null; attempt: number; sequence: number };
  }[]) {
    if (node.type === 'TOOL_OUTCOME_UNKNOWN' && node.taskId) {
      const t = await gql(url, ctx.adminToken, TASK, { id: node.taskId });
      unlessUnavailable(t, 'externalTask');
      const step = (t.data?.externalTask?.steps as StepView[] | undefined)?.find(
        (s) => s.attempt === node.attempt && s.sequence === node.sequence,
      );
      if (!step?.request?.arguments) {
        ctx.stats.errors++;
        ctx.log(`incident ${node.id}: step not found`);
        continue;
      }
      // What the CRM saw: a call of this tool with exactly these arguments.
      const tool = (step.toolRef ?? '').split('/')[1];
      const args = canonicalJson(step.request.arguments);
      const seen = ctx.crm.calls.find(
        (c) =>
          c.tool === tool && canonicalJson(c.args) === args && (c.status === 'ok' || c.status === 'replayed'),
      );
      if (!seen && Date.now() - Date.parse(step.createdAt) < SETTLE_MS) {
        ctx.stats.unknownDeferred++;
        continue;
      }
      const input = seen
        ? { id: node.id, happened: true, result: seen.result, comment: `CRM call #${seen.seq} found` }
        : { id: node.id, happened: false, comment: 'no such call in the CRM' };
      const d = await gql(url, ctx.adminToken, RESOLVE, { input });
      unlessUnavailable(d, 'resolveIncident');
      if (d.errors) {
        ctx.stats.errors++;
        ctx.log(`resolveIncident ${node.id}: ${JSON.stringify(d.errors)}`);
      } else if (seen) ctx.stats.unknownResolvedHappened++;
      else ctx.stats.unknownResolvedNotHappened++;
    } else if (node.type === 'TASK_FAILED' && node.taskId) {
      const n = retries.get(node.taskId) ?? 0;
      if (n >= ctx.maxRetriesPerTask) continue;
      retries.set(node.taskId, n + 1);
      const d = await gql(url, ctx.adminToken, RETRY, { id: node.taskId });
      if (codeOf(d) === 'UNAVAILABLE') retries.set(node.taskId, n);
      unlessUnavailable(d, 'retryTask');
      if (d.errors) {
        ctx.stats.errors++;
        ctx.log(`retryTask ${node.taskId}: ${JSON.stringify(d.errors)}`);
      } else ctx.stats.taskRetries++;
    } else if (!node.taskId || node.type !== 'TASK_FAILED') {
      const d = await gql(url, ctx.adminToken, RESOLVE, { input: { id: node.id, comment: 'soak: seen' } });
      if (!d.errors) ctx.stats.otherIncidentsResolved++;
    }
  }
}

/** Runs a pass every `everyMs` until `stop()` says so; errors (an engine down) are counted, not fatal. */
export function loop(
  name: string,
  everyMs: number,
  pass: (round: number) => Promise<void>,
  log: (l: string) => void,
): { stop: () => Promise<void> } {
  let running = true;
  const done = (async () => {
    for (let round = 0; running; round++) {
      try {
        await pass(round);
      } catch (e) {
        if (round % 20 === 0) log(`${name}: ${String(e).slice(0, 200)}`);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
    },
  };
}
