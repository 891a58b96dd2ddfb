import { bearerToken, constantTimeEqual } from '../engine/principals/index.js';
import type http from 'node:http';
import { getOperationAST, Kind, type OperationDefinitionNode, valueFromASTUntyped } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { EngineContext } from '../engine/common/index.js';
import { journalCalls } from '../engine/journal/index.js';
import { collectDbGauges, DECISION_BUCKETS } from '../engine/metrics/index.js';
import type { Logger } from '../log.js';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>) => {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
};

/** A cumulative histogram keyed by its label set. */
export class Histogram {
  private series = new Map<
    string,
    { labels: Record<string, string>; counts: number[]; sum: number; n: number }
  >();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[] = LATENCY_BUCKETS,
  ) {}

  observe(value: number, l: Record<string, string> = {}) {
    const key = JSON.stringify(l);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: l, counts: this.buckets.map(() => 0), sum: 0, n: 0 };
      this.series.set(key, s);
    }
    this.buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]++;
    });
    s.sum += value;
    s.n++;
  }

  render(): string[] {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values())
      out.push(...histogramLines(this.name, s.labels, this.buckets, s.counts, s.n, s.sum));
    return out;
  }
}

function histogramLines(
  name: string,
  l: Record<string, string>,
  buckets: number[],
  counts: number[],
  n: number,
  sum: number,
) {
  return [
    ...buckets.map((b, i) => `${name}_bucket${labels({ ...l, le: String(b) })} ${counts[i]}`),
    `${name}_bucket${labels({ ...l, le: '+Inf' })} ${n}`,
    `${name}_sum${labels(l)} ${sum}`,
    `${name}_count${labels(l)} ${n}`,
  ];
}

function family(
  name: string,
  type: 'gauge' | 'counter',
  help: string,
  rows: [Record<string, string>, number][],
) {
  return [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} ${type}`,
    ...rows.map(([l, v]) => `${name}${labels(l)} ${v}`),
  ];
}

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
    const lines = [
      ...family(
        'abada_tasks',
        'gauge',
        'External tasks by state.',
        g.tasksByState.map((r) => [{ state: r.state }, r.count]),
      ),
      ...family('abada_approvals_pending', 'gauge', 'Approvals waiting for a decision.', [
        [{}, g.approvalsPending],
      ]),
      ...family('abada_approvals_escalated', 'gauge', 'Pending approvals past their SLA.', [
        [{}, g.approvalsEscalated],
      ]),
      '# HELP abada_approval_decision_seconds Time from an approval opening to its decision.',
      '# TYPE abada_approval_decision_seconds histogram',
      ...histogramLines(
        'abada_approval_decision_seconds',
        {},
        DECISION_BUCKETS,
        g.decision.buckets,
        g.decision.count,
        g.decision.sumSeconds,
      ),
      ...family(
        'abada_incidents_open',
        'gauge',
        'Open incidents by type.',
        g.incidentsOpen.map((r) => [{ type: r.type }, r.count]),
      ),
      ...family(
        'abada_workers',
        'gauge',
        'Registered workers by health.',
        g.workersByHealth.map((r) => [{ health: r.health }, r.count]),
      ),
      ...family(
        'abada_model_tokens_total',
        'counter',
        'Model tokens journaled, by model and direction.',
        g.modelUsage.flatMap((u) => [
          [{ model: u.model, direction: 'input' }, u.inputTokens] as [Record<string, string>, number],
          [{ model: u.model, direction: 'output' }, u.outputTokens] as [Record<string, string>, number],
        ]),
      ),
      ...family(
        'abada_model_cost_usd_total',
        'counter',
        'Model cost priced by the engine, by model.',
        g.modelUsage.map((u) => [{ model: u.model }, u.costUsd]),
      ),
      ...family(
        'abada_webhook_deliveries',
        'gauge',
        'Webhook deliveries pending or failed.',
        g.webhookDeliveries.map((r) => [{ state: r.state }, r.count]),
      ),
      ...family(
        'abada_journal_calls_total',
        'counter',
        'Journal calls committed by this process: single journalStep calls and journalSteps batches.',
        Object.entries(journalCalls).map(([kind, n]) => [{ kind }, n]),
      ),
      ...this.fetch.render(),
      ...this.journal.render(),
    ];
    return `${lines.join('\n')}\n`;
  }
}

const TRACKED = new Set([
  'fetchAndLock',
  'journalStep',
  'journalSteps',
  'completeTask',
  'failTask',
  'extendLock',
  'decideApproval',
  'startProcess',
  'cancelProcess',
  'retryTask',
  'resolveIncident',
  'deploy',
]);

/** Ids only: which task, attempt, step, instance, approval a command concerns. */
function idsOf(field: string, args: Record<string, unknown>): Record<string, unknown> {
  const input = (args.input ?? {}) as Record<string, unknown>;
  const pick = (o: Record<string, unknown>, k: string) => (o[k] === undefined ? {} : { [k]: o[k] });
  return {
    ...pick(input, 'taskId'),
    ...pick(input, 'attempt'),
    ...(input.sequence === undefined ? {} : { step: input.sequence }),
    ...pick(input, 'kind'),
    ...pick(input, 'state'),
    ...pick(input, 'workerId'),
    ...pick(input, 'approvalId'),
    ...pick(input, 'decision'),
    ...(field === 'cancelProcess' ? { processInstanceId: args.id } : {}),
    ...(field === 'retryTask' ? { taskId: args.id } : {}),
    ...(field === 'resolveIncident' ? { incidentId: input.id } : {}),
    ...(field === 'startProcess' ? { key: args.key } : {}),
  };
}

/** Times and logs the tracked engine commands of each GraphQL mutation. */
export function observePlugin(metrics: EngineMetrics, log: Logger): Plugin {
  return {
    onExecute({ args }) {
      const op = getOperationAST(args.document, args.operationName) as OperationDefinitionNode | null;
      if (op?.operation !== 'mutation') return;
      const vars = (args.variableValues ?? {}) as Record<string, unknown>;
      const fields = op.selectionSet.selections.flatMap((s) =>
        s.kind === Kind.FIELD && TRACKED.has(s.name.value)
          ? [
              {
                name: s.name.value,
                key: s.alias?.value ?? s.name.value,
                args: Object.fromEntries(
                  (s.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, vars)]),
                ),
              },
            ]
          : [],
      );
      if (!fields.length) return;
      const start = performance.now();
      return {
        onExecuteDone({ result }) {
          const seconds = (performance.now() - start) / 1000;
          const errors = 'errors' in result ? (result.errors ?? []) : [];
          for (const f of fields) {
            const err = errors.find((e) => e.path?.[0] === f.key);
            const code = err ? codeOf(err) : null;
            const ids = idsOf(f.name, f.args);
            const input = (f.args.input ?? {}) as Record<string, unknown>;
            if (f.name === 'fetchAndLock') {
              const longPoll = Number(input.asyncResponseTimeoutMs ?? 0) > 0 ? 'true' : 'false';
              metrics.fetch.observe(seconds, { long_poll: longPoll, outcome: code ? 'error' : 'ok' });
            } else if (f.name === 'journalStep') {
              metrics.journal.observe(seconds, {
                kind: String(input.kind ?? ''),
                state: String(input.state ?? ''),
                outcome: code ? 'error' : 'ok',
              });
            }
            const entry = {
              command: f.name,
              ...ids,
              durationMs: Math.round(seconds * 1000),
              ...(code ? { code } : {}),
            };
            if (code === 'INTERNAL') log.error(entry, 'engine command failed');
            else if (code) log.info(entry, 'engine command refused');
            else if (
              f.name === 'fetchAndLock' ||
              f.name === 'journalStep' ||
              f.name === 'journalSteps' ||
              f.name === 'extendLock'
            )
              log.debug(entry, 'engine command');
            else log.info(entry, 'engine command');
          }
        },
      };
    },
  };
}

function codeOf(err: { extensions?: Record<string, unknown>; originalError?: unknown }): string {
  const original = err.originalError as { code?: unknown; extensions?: { code?: unknown } } | undefined;
  const code = err.extensions?.code ?? original?.extensions?.code ?? original?.code;
  return typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR' ? code : 'INTERNAL';
}

/** GET /metrics; with ABADA_METRICS_TOKEN set, only `Authorization: Bearer <that token>` may read it. */
export function serveMetrics(
  metrics: EngineMetrics,
  ctx: EngineContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  log: Logger,
) {
  const token = ctx.config.metricsToken;
  const given = bearerToken(req.headers.authorization);
  if (token && (given === null || !constantTimeEqual(given, token))) {
    res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' });
    res.end('Send Authorization: Bearer <ABADA_METRICS_TOKEN>.\n');
    return;
  }
  metrics
    .render(ctx)
    .then((body) => {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(body);
    })
    .catch((e) => {
      log.error({ err: e }, 'metrics scrape failed');
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('metrics unavailable: database unreachable\n');
    });
}
