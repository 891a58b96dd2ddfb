/**
 * The instance's history, one row per chained event, said in words: which rule approved or refused a
 * call, what failed validation, who made a new version, and which attempts at a decision were refused.
 */
import Link from 'next/link';
import { when } from '../../lib/format';
import { eventText, REFUSAL_EVENTS } from './events';
import type { TraceEvent } from './types';

export function HistoryList({ history }: { history: readonly TraceEvent[] }) {
  return (
    <ol className="timeline" data-testid="timeline">
      {history.map((h) => (
        <li key={h.seq} data-event={h.eventType} className={REFUSAL_EVENTS.has(h.eventType) ? 'refused' : undefined}>
          <span className="event">{eventText(h)}</span>{' '}
          <span className="muted small">
            #{h.seq} · {when(h.at)} · {h.actor}
            {h.sequence != null ? ` · attempt ${h.attempt}, step ${h.sequence}` : ''}
          </span>
          {h.approvalId ? (
            <>
              {' '}
              <Link href={`/approvals/${h.approvalId}`} className="small">
                approval
              </Link>
            </>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
