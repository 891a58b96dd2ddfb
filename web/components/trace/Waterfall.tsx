/**
 * The steps on one time axis: each bar from the step's first entry to its last, the part spent waiting
 * for a person (proposed → decided) or for a child process (a delegation) drawn apart, with tokens and
 * cost per step and the totals. Times come from the journal and the history, not from the browser.
 */
import { duration, money, usageTokens } from '../../lib/format';
import { stepKey, type TraceEvent, type TraceTask } from './types';

const NO_TOKENS = { input: 0, output: 0 };
const FINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'OUTCOME_UNKNOWN']);
const DECIDED = /^(STEP_APPROVED|STEP_REJECTED|APPROVAL_(APPROVED|REJECTED|EXPIRED|REVOKED|RETIRED|VOIDED))$/;

interface Row {
  key: string;
  label: string;
  step: TraceTask['steps'][number];
  start: number;
  end: number;
  wait: { kind: 'person' | 'child'; start: number; end: number } | null;
  tokens: { input: number; output: number };
}

function rowsOf(tasks: readonly TraceTask[], history: readonly TraceEvent[], now: number): Row[] {
  const events = new Map<string, TraceEvent[]>();
  for (const e of history) {
    if (!e.taskId) continue;
    const k = stepKey(e.taskId, e.attempt, e.sequence);
    events.set(k, [...(events.get(k) ?? []), e]);
  }
  return tasks.flatMap((t) =>
    t.steps.map((s) => {
      const k = stepKey(t.id, s.attempt, s.sequence);
      const start = new Date(s.createdAt).getTime();
      const end = FINAL.has(s.state) ? new Date(s.updatedAt).getTime() : now;
      const evs = events.get(k) ?? [];
      // a call an `auto` rule approved waited for nobody: the policy answered within the proposal
      const auto = evs.some((e) => e.eventType === 'APPROVAL_AUTO');
      const proposed = auto ? undefined : evs.find((e) => e.eventType === 'STEP_PROPOSED');
      const decided = proposed ? evs.find((e) => e.seq > proposed.seq && DECIDED.test(e.eventType)) : undefined;
      let wait: Row['wait'] = null;
      if (proposed) {
        wait = { kind: 'person', start: new Date(proposed.at).getTime(), end: decided ? new Date(decided.at).getTime() : now };
      } else if (s.toolRef?.startsWith('delegate:')) {
        wait = { kind: 'child', start, end };
      }
      const label = s.kind === 'MODEL_CALL' ? `model ${s.model ?? ''}` : (s.toolRef ?? 'tool');
      const tokens = usageTokens(s.usage) ?? NO_TOKENS;
      return { key: k, label, step: s, start, end: Math.max(end, start), wait, tokens };
    }),
  );
}

export function Waterfall({
  tasks,
  history,
  startedAt,
  endedAt,
}: {
  tasks: readonly TraceTask[];
  history: readonly TraceEvent[];
  startedAt: string;
  endedAt: string | null;
}) {
  const now = Date.now();
  const rows = rowsOf(tasks, history, now);
  const t0 = Math.min(new Date(startedAt).getTime(), ...rows.map((r) => r.start));
  const t1 = Math.max(endedAt ? new Date(endedAt).getTime() : now, ...rows.map((r) => r.end));
  const span = Math.max(t1 - t0, 1);
  const pct = (t: number) => `${(((t - t0) / span) * 100).toFixed(2)}%`;
  const width = (a: number, b: number) => `${Math.max(((b - a) / span) * 100, 0.4).toFixed(2)}%`;
  const totals = rows.reduce(
    (acc, r) => ({
      input: acc.input + r.tokens.input,
      output: acc.output + r.tokens.output,
      cost: acc.cost + (r.step.costUsd ?? 0),
      person: acc.person + (r.wait?.kind === 'person' ? r.wait.end - r.wait.start : 0),
      child: acc.child + (r.wait?.kind === 'child' ? r.wait.end - r.wait.start : 0),
    }),
    { input: 0, output: 0, cost: 0, person: 0, child: 0 },
  );
  return (
    <section className="card" aria-labelledby="wf-title" data-testid="waterfall">
      <h2 id="wf-title">Steps over time</h2>
      <p className="small" data-testid="waterfall-totals">
        Total {duration(t1 - t0)} · waiting for a person {duration(totals.person)} · waiting for a child{' '}
        {duration(totals.child)} · {totals.input} tokens in / {totals.output} out · {money(totals.cost)}
      </p>
      {rows.length === 0 ? <p className="muted">No steps yet.</p> : null}
      <ol className="waterfall">
        {rows.map((r) => (
          <li key={r.key} data-step={`${r.step.kind}:${r.step.toolRef ?? ''}:${r.step.state}`} data-wait={r.wait?.kind ?? ''}>
            <div className="wf-label">
              <span className="small">
                {r.step.attempt}.{r.step.sequence}
              </span>{' '}
              <code>{r.label}</code> <span className={`badge state-${r.step.state.toLowerCase()}`}>{r.step.state.toLowerCase()}</span>
            </div>
            <div className="wf-track" aria-hidden="true">
              <span className={`wf-bar ${r.step.kind === 'MODEL_CALL' ? 'model' : 'tool'}`} style={{ left: pct(r.start), width: width(r.start, r.end) }} />
              {r.wait ? (
                <span className={`wf-bar wait-${r.wait.kind}`} style={{ left: pct(r.wait.start), width: width(r.wait.start, r.wait.end) }} />
              ) : null}
            </div>
            <div className="wf-figures small">
              <span data-testid="step-duration">{duration(r.end - r.start)}</span>
              {r.wait ? (
                <span className="wait-text" data-testid="step-wait">
                  {' '}
                  · waiting for {r.wait.kind === 'person' ? 'a person' : 'a child'} {duration(r.wait.end - r.wait.start)}
                </span>
              ) : null}
              {r.tokens.input || r.tokens.output ? ` · ${r.tokens.input}/${r.tokens.output} tokens` : ''}
              {r.step.costUsd != null ? ` · ${money(r.step.costUsd)}` : ''}
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
}
