'use client';
/** Process instances, filtered by state, cursor-paged. */
import Link from 'next/link';
import { useState } from 'react';
import { useQuery } from 'urql';
import { StateBadge } from '../../components/Badges';
import { Pager, useCursor } from '../../components/Pager';
import { sentence } from '../../lib/errors';
import { when } from '../../lib/format';
import { InstancesQuery } from '../../lib/queries';

const STATES = ['ACTIVE', 'SUSPENDED', 'COMPLETED', 'CANCELLED', 'FAILED'] as const;
type Filter = (typeof STATES)[number] | 'ALL';

export default function InstancesPage() {
  const [state, setState] = useState<Filter>('ALL');
  const cursor = useCursor();
  const [{ data, error }] = useQuery({
    query: InstancesQuery,
    variables: { state: state === 'ALL' ? null : state, first: 20, after: cursor.after },
  });
  return (
    <section>
      <h1>Instances</h1>
      <div className="filters">
        <label>
          State{' '}
          <select
            value={state}
            onChange={(e) => {
              setState(e.target.value as Filter);
              cursor.reset();
            }}
          >
            <option value="ALL">All</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {data && data.processInstances.edges.length === 0 ? <p className="empty">No instances.</p> : null}
      {data && data.processInstances.edges.length > 0 ? (
        <div className="table-wrap">
          <table className="list">
            <thead>
              <tr>
                <th scope="col">Process</th>
                <th scope="col">State</th>
                <th scope="col">At node</th>
                <th scope="col">Business key</th>
                <th scope="col">Started</th>
                <th scope="col">Ended</th>
              </tr>
            </thead>
            <tbody>
              {data.processInstances.edges.map(({ node: i }) => (
                <tr key={i.id}>
                  <td>
                    <Link href={`/instances/${i.id}`} className="strong">
                      {i.key} v{i.version}
                    </Link>{' '}
                    <span className="muted small">{i.id.slice(0, 8)}</span>
                  </td>
                  <td>
                    <StateBadge state={i.state} />
                  </td>
                  <td>{i.currentNodeId ?? '—'}</td>
                  <td>{i.businessKey ?? '—'}</td>
                  <td>{when(i.createdAt)}</td>
                  <td>{when(i.endedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {data ? (
        <Pager
          page={cursor.page}
          total={data.processInstances.totalCount}
          hasNext={data.processInstances.pageInfo.hasNextPage}
          onPrev={cursor.prev}
          onNext={() => cursor.next(data.processInstances.pageInfo.endCursor)}
        />
      ) : null}
    </section>
  );
}
