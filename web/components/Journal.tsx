/** A task's step journal: one row per (attempt, sequence), the policy's answer marked where it gave one. */
import { money, tokens } from '../lib/format';
import { PolicyBadge } from './Badges';
import { policyMark } from './trace/events';
import { stepKey, type TraceEvent } from './trace/types';

interface Step {
  attempt: number;
  sequence: number;
  kind: string;
  state: string;
  toolRef: string | null;
  model: string | null;
  idempotencyKey: string | null;
  reused: boolean;
  usage: unknown;
  costUsd: number | null;
  comment: string | null;
  error: string | null;
  approvalId: string | null;
}

export function Journal({
  taskId,
  steps,
  history,
}: {
  taskId: string;
  steps: readonly Step[];
  history: readonly TraceEvent[];
}) {
  if (steps.length === 0) return <p className="muted small">No steps journaled yet.</p>;
  return (
    <div className="table-wrap">
      <table className="list journal">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">Tool / model</th>
            <th scope="col">Tokens</th>
            <th scope="col">Cost</th>
            <th scope="col">Idempotency key</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((s) => {
            const mark = policyMark(s, stepKey(taskId, s.attempt, s.sequence), history);
            return (
              <tr key={`${s.attempt}-${s.sequence}`} data-step={`${s.kind}:${s.toolRef ?? ''}:${s.state}`}>
                <td>
                  {s.attempt}.{s.sequence}
                </td>
                <td>{s.kind === 'MODEL_CALL' ? 'model call' : 'tool call'}</td>
                <td>
                  <span className={`badge state-${s.state.toLowerCase()}`}>{s.state}</span>
                  {s.reused ? <span className="badge">reused</span> : null}
                  {mark ? <PolicyBadge mark={mark} /> : null}
                  {s.comment ? <p className="quote small">“{s.comment}”</p> : null}
                  {s.error ? <p className="error-text small">{s.error}</p> : null}
                </td>
                <td>
                  <code>{s.toolRef ?? s.model ?? '—'}</code>
                </td>
                <td>{tokens(s.usage)}</td>
                <td>{money(s.costUsd)}</td>
                <td>
                  <code className="small">{s.idempotencyKey ?? '—'}</code>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
