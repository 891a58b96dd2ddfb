/**
 * /metrics for one engine process: the database gauges (queried at scrape time, the same from every process:
 * aggregate them with max()), this process's counters and its latency histograms (from the GraphQL layer).
 */
import type { EngineContext } from '../engine/common/index.js';
import { collectDbGauges, DECISION_BUCKETS } from '../engine/metrics/index.js';
import { counter, gauge, Histogram, histogram, type Row } from './registry.js';

/** One row per `{ <label>, count }` query row, labelled by that field. */
const byLabel = <K extends string>(label: K, rows: ({ [k in K]: string } & { count: number })[]): Row[] =>
  rows.map((r) => [{ [label]: r[label] }, r.count]);

export class EngineMetrics {
  readonly fetch = new Histogram(
    'abada_fetch_duration_seconds',
    'fetchAndLock latency, long-poll wait included (label long_poll).',
  );
  readonly journal = new Histogram(
    'abada_journal_duration_seconds',
    'journalStep latency by step kind, state and outcome.',
  );

  async render(ctx: EngineContext): Promise<string> {
    const g = await collectDbGauges(ctx);
    const { journalCalls: calls, journalBatches: batches } = ctx.counters;
    const lines = [
      // tasks, approvals, incidents, workers: what is waiting and on whom
      ...gauge('abada_tasks', 'External tasks by state.', byLabel('state', g.tasksByState)),
      ...gauge('abada_approvals_pending', 'Approvals waiting for a decision.', g.approvalsPending),
      ...gauge('abada_approvals_escalated', 'Pending approvals past their SLA.', g.approvalsEscalated),
      ...histogram(
        'abada_approval_decision_seconds',
        'Time from an approval opening to its decision.',
        DECISION_BUCKETS,
        [{ labels: {}, counts: g.decision.buckets, n: g.decision.count, sum: g.decision.sumSeconds }],
      ),
      ...gauge('abada_incidents_open', 'Open incidents by type.', byLabel('type', g.incidentsOpen)),
      ...gauge('abada_workers', 'Registered workers by health.', byLabel('health', g.workersByHealth)),
      // model tokens and cost, and the webhook outbox
      ...counter(
        'abada_model_tokens_total',
        'Model tokens journaled, by model and direction.',
        g.modelUsage.flatMap((u): Row[] => [
          [{ model: u.model, direction: 'input' }, u.inputTokens],
          [{ model: u.model, direction: 'output' }, u.outputTokens],
        ]),
      ),
      ...counter(
        'abada_model_cost_usd_total',
        'Model cost priced by the engine, by model.',
        g.modelUsage.map((u): Row => [{ model: u.model }, u.costUsd]),
      ),
      ...gauge(
        'abada_webhook_deliveries',
        'Webhook deliveries pending or failed.',
        byLabel('state', g.webhookDeliveries),
      ),
      // this process's own counts
      ...counter(
        'abada_journal_calls_total',
        'Journal calls committed by this process: single journalStep calls and journalSteps batches (a journalBatch entry counts as the call it stands for).',
        [
          [{ kind: 'single' }, calls.single],
          [{ kind: 'batch' }, calls.batch],
        ],
      ),
      ...counter(
        'abada_journal_batches_total',
        "journalBatch requests this process accepted (several tasks' journal calls in one request).",
        batches.requests,
      ),
      ...counter(
        'abada_journal_batch_entries_total',
        "Entries (one task's journal call each) carried by those journalBatch requests.",
        batches.entries,
      ),
      ...counter(
        'abada_fast_path_fallbacks_total',
        'Requests a fast path handed to its slow path, by path and the named reason (any other error is raised, never hidden).',
        [...ctx.counters.fastPathFallbacks].map(([key, n]): Row => {
          const [path, reason] = key.split('\u0000');
          return [{ path, reason }, n];
        }),
      ),
      ...counter(
        'abada_decision_unauthenticated_total',
        'decideApproval and revokeApproval requests refused UNAUTHENTICATED (no actor: logged, not in history).',
        ctx.counters.unauthenticatedDecisions,
      ),
      ...counter(
        'abada_background_failures_total',
        'Failed rounds of the background loops, by loop and cause (unavailable: the database is down; error: anything else, logged with its stack).',
        Object.entries(ctx.counters.backgroundFailures).flatMap(([loop, n]): Row[] => [
          [{ loop, cause: 'unavailable' }, n.unavailable],
          [{ loop, cause: 'error' }, n.error],
        ]),
      ),
      ...this.fetch.render(),
      ...this.journal.render(),
    ];
    return `${lines.join('\n')}\n`;
  }
}
