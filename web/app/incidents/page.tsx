'use client';
/**
 * Incidents: open / resolved; a TOOL_OUTCOME_UNKNOWN is resolved by saying whether the call happened. A
 * repeated one (a worker's rejected polls) is one incident with how often and when it was last seen.
 */
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { StateBadge } from '../../components/Badges';
import { ResolveForm } from '../../components/ResolveForm';
import { sentence } from '../../lib/errors';
import { json, when } from '../../lib/format';
import { IncidentOpened, IncidentsQuery } from '../../lib/queries';

export default function IncidentsPage() {
  const [state, setState] = useState<'OPEN' | 'RESOLVED'>('OPEN');
  const [{ data, error }, refetch] = useQuery({ query: IncidentsQuery, variables: { state, first: 50 } });
  const [opened] = useSubscription({ query: IncidentOpened });
  useEffect(() => {
    if (opened.data) refetch({ requestPolicy: 'network-only' });
  }, [opened.data, refetch]);
  return (
    <section>
      <h1>Incidents</h1>
      <div className="filters">
        <label>
          State{' '}
          <select value={state} onChange={(e) => setState(e.target.value as 'OPEN' | 'RESOLVED')}>
            <option value="OPEN">Open</option>
            <option value="RESOLVED">Resolved</option>
          </select>
        </label>
      </div>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {data && data.incidents.edges.length === 0 ? <p className="empty">No {state.toLowerCase()} incidents.</p> : null}
      <ul className="plain">
        {data?.incidents.edges.map(({ node: n }) => (
          <li key={n.id} className="card">
            <h2 className="h3">
              {n.type.replace(/_/g, ' ').toLowerCase()} <StateBadge state={n.state} />
            </h2>
            <p>{n.message}</p>
            <p className="muted small">
              {when(n.createdAt)}
              {n.processInstanceId ? (
                <>
                  {' · '}
                  <Link href={`/instances/${n.processInstanceId}`}>instance {n.processInstanceId.slice(0, 8)}</Link>
                </>
              ) : null}
              {n.sequence != null ? ` · attempt ${n.attempt}, step ${n.sequence}` : ''}
              {n.workerId ? ` · worker ${n.workerId}` : ''}
              {n.count > 1 ? ` · seen ${n.count} times, last ${when(n.lastSeenAt)}` : ''}
            </p>
            {n.state === 'OPEN' ? (
              <ResolveForm id={n.id} outcomeUnknown={n.type === 'TOOL_OUTCOME_UNKNOWN'} onDone={() => refetch({ requestPolicy: 'network-only' })} />
            ) : (
              <details>
                <summary>Resolution ({when(n.resolvedAt)})</summary>
                <pre className="code">{json(n.resolution)}</pre>
              </details>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
