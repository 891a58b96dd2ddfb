'use client';
/** Principals (admins only): who may call the engine, filtered by kind, cursor-paged; edit, rotate, disable. */
import { useState } from 'react';
import { useQuery } from 'urql';
import { Pager, useCursor } from '../../components/Pager';
import { PrincipalCard } from '../../components/PrincipalCard';
import { sentence } from '../../lib/errors';
import { readFragment } from '../../lib/graphql';
import { PrincipalRow, PrincipalsQuery } from '../../lib/queries';

const KINDS = ['HUMAN', 'WORKER', 'ADMIN'] as const;
type Filter = (typeof KINDS)[number] | 'ALL';

export default function PrincipalsPage() {
  const [kind, setKind] = useState<Filter>('ALL');
  const cursor = useCursor();
  const [{ data, error }, refetch] = useQuery({
    query: PrincipalsQuery,
    variables: { kind: kind === 'ALL' ? null : kind, first: 20, after: cursor.after },
  });
  const rows = data?.principals.edges.map((e) => readFragment(PrincipalRow, e.node)) ?? [];
  return (
    <section>
      <h1>Principals</h1>
      <p className="muted">
        Who may call the engine. Disabling is final; a rotated token is shown once. Create principals with{' '}
        <code>abada principal create</code>.
      </p>
      <div className="filters">
        <label>
          Kind{' '}
          <select
            value={kind}
            onChange={(e) => {
              setKind(e.target.value as Filter);
              cursor.reset();
            }}
          >
            <option value="ALL">All</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {data && rows.length === 0 ? <p className="empty">No principals.</p> : null}
      <ul className="plain">
        {rows.map((p) => (
          <PrincipalCard key={p.id} p={p} onChanged={() => refetch({ requestPolicy: 'network-only' })} />
        ))}
      </ul>
      {data ? (
        <Pager
          page={cursor.page}
          hasNext={data.principals.pageInfo.hasNextPage}
          total={data.principals.totalCount}
          onPrev={cursor.prev}
          onNext={() => cursor.next(data.principals.pageInfo.endCursor)}
        />
      ) : null}
    </section>
  );
}
