/**
 * The conversation rebuilt from the journal: the agent's inputs, then each step in order — the model's
 * words and the calls it asked for, each tool call with its request and response opening in place, and
 * the person's rejection or edit where it happened. Reads only what the journal kept (redaction applied).
 */
import Link from 'next/link';
import { json, when } from '../../lib/format';
import { PolicyBadge } from '../Badges';
import { actorName, eventText, policyMark } from './events';
import { stepKey, type TraceEvent, type TraceTask } from './types';

const PERSON = /^APPROVAL_(APPROVED|REJECTED|LEVEL_APPROVED|REVOKED|EXPIRED|VOIDED|RETIRED)$/;
/** the policy's approval, an edit that counted for no level, and refused attempts: said in full */
const IN_FULL = /^APPROVAL_(AUTO|EDITED|DECISION_REFUSED)$/;

/** "approved level 1 of 2 with changes, on version 1": a person's decision with its level and version. */
function personText(e: TraceEvent): string {
  const d = e.data as { edited?: boolean; editedFrom?: unknown; level?: number | null; of?: number; version?: number } | null;
  const what = e.eventType === 'APPROVAL_LEVEL_APPROVED' ? 'approved' : e.eventType.replace('APPROVAL_', '').toLowerCase();
  const level = d?.level != null && (d.of ?? 1) > 1 ? ` level ${d.level} of ${d.of}` : '';
  const edited = d?.edited || d?.editedFrom ? ' with changes' : '';
  return `${what}${level}${edited}${d?.version ? `, on version ${d.version}` : ''}`;
}

/** What people, the policy and the clock did to a proposed call, in history order: who, what, when. */
function decisionsAt(history: readonly TraceEvent[], key: string) {
  return history
    .filter(
      (e) =>
        e.taskId &&
        stepKey(e.taskId, e.attempt, e.sequence) === key &&
        (PERSON.test(e.eventType) || IN_FULL.test(e.eventType)),
    )
    .map((e) => ({
      seq: e.seq,
      text: `${actorName(e.actor)} — ${IN_FULL.test(e.eventType) ? eventText(e) : personText(e)}`,
      at: e.at,
      refused: e.eventType === 'APPROVAL_DECISION_REFUSED',
    }));
}

interface Msg {
  content?: unknown;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
}

function modelText(response: unknown): string | null {
  const m = response as Msg | null;
  return typeof m?.content === 'string' && m.content.trim() ? m.content : null;
}

function asked(response: unknown): string[] {
  const m = response as Msg | null;
  return (m?.tool_calls ?? []).map((c) => c.function?.name ?? '?');
}

export function Conversation({
  tasks,
  inputs,
  history,
}: {
  tasks: readonly TraceTask[];
  inputs: unknown;
  history: readonly TraceEvent[];
}) {
  const agentTasks = tasks.filter((t) => t.steps.length > 0);
  return (
    <section className="card" aria-labelledby="conv-title" data-testid="conversation">
      <h2 id="conv-title">Conversation</h2>
      <div className="msg input">
        <p className="who-said">Instance variables (the agent's inputs are drawn from them)</p>
        <pre className="code">{json(inputs)}</pre>
      </div>
      {agentTasks.length === 0 ? <p className="muted">No agent step journaled yet.</p> : null}
      {agentTasks.map((t) => (
        <ol key={t.id} className="conversation" aria-label={`Node ${t.nodeId}`}>
          {t.steps.map((s) => {
            const key = `${t.id}-${s.attempt}-${s.sequence}`;
            if (s.kind === 'MODEL_CALL') {
              const text = modelText(s.response);
              const calls = asked(s.response);
              return (
                <li key={key} className="msg model" data-step={`MODEL_CALL::${s.state}`}>
                  <p className="who-said">
                    Model <code>{s.model}</code> <span className="muted small">· attempt {s.attempt}, step {s.sequence} · {s.state.toLowerCase()}</span>
                  </p>
                  {text ? <p className="said">{text}</p> : s.state === 'COMPLETED' ? <p className="muted">The model gave no text.</p> : null}
                  {calls.length ? <p className="small">Asks for: {calls.map((c) => <code key={c}>{c} </code>)}</p> : null}
                  {s.error ? <p className="error-text small">{s.error}</p> : null}
                </li>
              );
            }
            const req = s.request as { arguments?: unknown } | null;
            const mark = policyMark(s, stepKey(t.id, s.attempt, s.sequence), history);
            const read = s.purpose === 'PRECONDITION' ? 'precondition read' : s.purpose === 'LOOKUP' ? 'lookup' : null;
            return (
              <li
                key={key}
                className={`msg tool${read ? ' engine-read' : ''}`}
                data-step={`TOOL_CALL:${s.toolRef ?? ''}:${s.state}`}
                data-purpose={s.purpose ?? 'CALL'}
              >
                <details>
                  <summary>
                    <span className="who-said">
                      {read ? `Engine's ${read}` : 'Tool'} <code>{s.toolRef}</code>
                    </span>{' '}
                    <span className={`badge state-${s.state.toLowerCase()}`}>{s.state.toLowerCase()}</span>{' '}
                    {mark ? <PolicyBadge mark={mark} /> : null}{' '}
                    {s.reconciled ? <span className="badge reversible">settled by lookup</span> : null}{' '}
                    <span className="muted small">step {s.sequence} · request and response</span>
                  </summary>
                  {s.toolDescription ? (
                    <p className="small">
                      <span className="muted">The tool server's description: </span>
                      {s.toolDescription}
                    </p>
                  ) : null}
                  <div className="grid2 io">
                    <div>
                      <h3 className="h4">Request</h3>
                      <pre className="code" data-testid="step-request">{json(req?.arguments ?? s.request)}</pre>
                    </div>
                    <div>
                      <h3 className="h4">Response</h3>
                      <pre className="code" data-testid="step-response">
                        {s.response != null ? json(s.response) : s.error ? `error: ${s.error}` : '— none yet —'}
                      </pre>
                    </div>
                  </div>
                </details>
                {s.approvalId ? (
                  <ul className="plain small decisions" data-testid="step-decisions">
                    {decisionsAt(history, stepKey(t.id, s.attempt, s.sequence)).map((d) => (
                      <li key={d.seq} className={d.refused ? 'error-text' : undefined}>
                        {d.text} <span className="muted">{when(d.at)}</span>
                      </li>
                    ))}
                    <li>
                      <Link href={`/approvals/${s.approvalId}`}>the approval of this call</Link>
                    </li>
                  </ul>
                ) : null}
                {s.comment && mark && mark.kind !== 'auto' ? (
                  <p className="person rejected" data-testid="engine-refusal">
                    The engine answered the model, before any person was asked: “{s.comment}”
                  </p>
                ) : s.comment ? (
                  <p className={`person ${s.state === 'REJECTED' ? 'rejected' : ''}`}>
                    {s.state === 'REJECTED' ? 'Rejected by a person: ' : 'A person noted: '}“{s.comment}”
                  </p>
                ) : null}
              </li>
            );
          })}
        </ol>
      ))}
    </section>
  );
}
