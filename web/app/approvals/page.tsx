'use client';
/** The approvals inbox: live (approvalOpened), mine / all, by state, SLA time left, cursor paging. */
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { EscalatedBadge, StateBadge } from '../../components/Badges';
import { Pager, useCursor } from '../../components/Pager';
import { sentence } from '../../lib/errors';
import { timeLeft, when } from '../../lib/format';
import { readFragment } from '../../lib/graphql';
import { ApprovalChanged, ApprovalOpened, ApprovalRow, ApprovalsQuery } from '../../lib/queries';

type StateFilter = 'PENDING' | 'APPROVED' | 'REJECTED' | 'RETIRED' | 'ALL';
const PAGE = 20;

export default function ApprovalsPage() {
  const [mine, setMine] = useState(true);
  const [state, setState] = useState<StateFilter>('PENDING');
  const [now, setNow] = useState(() => Date.now());
  const [fresh, setFresh] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const cursor = useCursor();
  const [{ data, error, fetching }, refetch] = useQuery({
    query: ApprovalsQuery,
    variables: { mine, state: state === 'ALL' ? null : state, first: PAGE, after: cursor.after },
  });

  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);

  const [opened] = useSubscription({ query: ApprovalOpened });
  useEffect(() => {
    if (!opened.data) return;
    const a = readFragment(ApprovalRow, opened.data.approvalOpened);
    setFresh((f) => (f.includes(a.id) ? f : [...f, a.id]));
    setNotice(`New approval: ${a.server} / ${a.tool}, for ${a.candidateGroups.join(', ')}.`);
    refetch({ requestPolicy: 'network-only' });
  }, [opened.data, refetch]);

  const [changed] = useSubscription({ query: ApprovalChanged });
  useEffect(() => {
    if (changed.data) refetch({ requestPolicy: 'network-only' });
  }, [changed.data, refetch]);

  const rows = data?.approvals.edges.map((e) => readFragment(ApprovalRow, e.node)) ?? [];

  return (
    <section>
      <div className="page-head">
        <h1>Approvals</h1>
        <p role="status" aria-live="polite" className={notice ? 'live-notice' : 'sr-only'} data-testid="live-notice">
          {notice ?? ''}
        </p>
      </div>
      <div className="filters">
        <fieldset className="segmented">
          <legend className="sr-only">Whose approvals</legend>
          <label>
            <input type="radio" name="mine" checked={mine} onChange={() => (setMine(true), cursor.reset())} />
            Mine
          </label>
          <label>
            <input type="radio" name="mine" checked={!mine} onChange={() => (setMine(false), cursor.reset())} />
            All I can see
          </label>
        </fieldset>
        <label>
          State{' '}
          <select
            value={state}
            onChange={(e) => {
              setState(e.target.value as StateFilter);
              cursor.reset();
            }}
          >
            <option value="PENDING">Pending</option>
            <option value="APPROVED">Approved</option>
            <option value="REJECTED">Rejected</option>
            <option value="RETIRED">Retired</option>
            <option value="ALL">All</option>
          </select>
        </label>
      </div>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {!data && fetching ? <p className="muted">Loading…</p> : null}
      {data && rows.length === 0 ? <p className="empty">Nothing waiting for you. New approvals appear here as they arrive.</p> : null}
      {rows.length > 0 ? (
        <div className="table-wrap">
          <table className="list" data-testid="approvals">
            <thead>
              <tr>
                <th scope="col">Call</th>
                <th scope="col">Node</th>
                <th scope="col">For</th>
                <th scope="col">State</th>
                <th scope="col">SLA</th>
                <th scope="col">Opened</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.id} className={fresh.includes(a.id) ? 'fresh' : undefined} data-approval-id={a.id} data-instance-id={a.processInstanceId}>
                  <td>
                    <Link href={`/approvals/${a.id}`} className="strong">
                      {a.server} / {a.tool}
                    </Link>
                    {fresh.includes(a.id) ? <span className="badge new">new</span> : null}
                    <div className="small" data-testid="row-impact">
                      {a.impact ?? argumentSummary(a.arguments)}
                    </div>
                    <span className={`badge risk-${a.risk.toLowerCase()}`}>risk: {a.risk.toLowerCase()}</span>
                    {a.reversible ? null : <span className="badge irreversible">cannot be undone</span>}
                  </td>
                  <td>
                    {a.nodeId} <span className="muted small">attempt {a.attempt}, step {a.sequence}</span>
                  </td>
                  <td>{a.candidateGroups.join(', ')}</td>
                  <td>
                    <StateBadge state={a.state} /> {a.escalated ? <EscalatedBadge /> : null}
                  </td>
                  <td className={a.state === 'PENDING' && a.slaDueAt && new Date(a.slaDueAt).getTime() < now ? 'overdue' : ''}>
                    {a.state === 'PENDING' ? timeLeft(a.slaDueAt, now) : `decided by ${a.decidedBy ?? '—'}`}
                    {a.state === 'PENDING' && a.expiresAt ? (
                      <div className="muted small">expires: {timeLeft(a.expiresAt, now)}</div>
                    ) : null}
                  </td>
                  <td>{when(a.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {data ? (
        <Pager
          page={cursor.page}
          total={data.approvals.totalCount}
          hasNext={data.approvals.pageInfo.hasNextPage}
          onPrev={cursor.prev}
          onNext={() => cursor.next(data.approvals.pageInfo.endCursor)}
        />
      ) : null}
    </section>
  );
}

/** The first few arguments at a glance (`orderId 5531 · amount 89 · currency EUR`); the detail page has them all. */
function argumentSummary(args: unknown): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return '';
  const parts = Object.entries(args as Record<string, unknown>)
    .filter(([, v]) => v === null || typeof v !== 'object')
    .slice(0, 4)
    .map(([k, v]) => `${k} ${String(v)}`);
  return parts.join(' · ').slice(0, 120);
}
