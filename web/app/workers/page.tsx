'use client';
/** Worker health: ONLINE / ERROR / OFFLINE, last heartbeat, consecutive failures. */
import { useEffect } from 'react';
import { useQuery } from 'urql';
import { StateBadge } from '../../components/Badges';
import { sentence } from '../../lib/errors';
import { when } from '../../lib/format';
import { WorkersQuery } from '../../lib/queries';

export default function WorkersPage() {
  const [{ data, error }, refetch] = useQuery({ query: WorkersQuery });
  useEffect(() => {
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 10_000);
    return () => clearInterval(t);
  }, [refetch]);
  return (
    <section>
      <h1>Workers</h1>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {data && data.workers.length === 0 ? <p className="empty">No worker has registered yet.</p> : null}
      {data && data.workers.length > 0 ? (
        <div className="table-wrap">
          <table className="list">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Health</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col">Consecutive failures</th>
                <th scope="col">Last rejection</th>
                <th scope="col">Topics / models</th>
              </tr>
            </thead>
            <tbody>
              {data.workers.map((w) => (
                <tr key={w.workerId}>
                  <td>
                    <code>{w.workerId}</code>
                  </td>
                  <td>
                    <StateBadge state={w.health} />
                  </td>
                  <td>{when(w.lastHeartbeatAt)}</td>
                  <td>{w.consecutiveFailures}</td>
                  <td>{w.lastRejectionAt ? `${when(w.lastRejectionAt)}: ${w.lastRejectionReason ?? ''}` : '—'}</td>
                  <td className="small">
                    {w.topics.join(', ')}
                    {w.models.length ? ` · ${w.models.join(', ')}` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
