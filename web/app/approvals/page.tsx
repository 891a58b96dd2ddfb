'use client';
/**
 * The approvals inbox: live (approvalOpened), mine / all, by state; filters by process, tool, risk and age
 * over the loaded page; j/k (or the arrows) move between rows and Enter opens one; the tab title counts the
 * approvals waiting for me, and a browser notification says when one arrives (asked for on a click only).
 */
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { EscalatedBadge, StateBadge } from '../../components/Badges';
import { Pager, useCursor } from '../../components/Pager';
import { sentence } from '../../lib/errors';
import { timeLeft, when } from '../../lib/format';
import { Filters, matches, NO_FILTER, useNotifications } from '../../components/inbox/Filters';
import { readFragment } from '../../lib/graphql';
import { useShortcut } from '../../lib/keys';
import { ApprovalChanged, ApprovalOpened, ApprovalRow, ApprovalsQuery, MyPendingCount } from '../../lib/queries';

type StateFilter = 'PENDING' | 'APPROVED' | 'REJECTED' | 'RETIRED' | 'ALL';
const PAGE = 50;

export default function ApprovalsPage() {
  const [mine, setMine] = useState(true);
  const [state, setState] = useState<StateFilter>('PENDING');
  const [now, setNow] = useState(() => Date.now());
  const [fresh, setFresh] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [filter, setFilter] = useState(NO_FILTER);
  const [current, setCurrent] = useState(-1);
  const table = useRef<HTMLTableElement>(null);
  const router = useRouter();
  const notifications = useNotifications();
  const cursor = useCursor();
  const [count, recount] = useQuery({ query: MyPendingCount });
  const waiting = count.data?.approvals.totalCount;
  useEffect(() => {
    document.title = waiting ? `(${waiting}) Approvals — Abada` : 'Approvals — Abada';
    return () => {
      document.title = 'Abada';
    };
  }, [waiting]);
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
    if (notifications.on) new Notification(`Approval: ${a.server} / ${a.tool}`, { body: a.impact ?? '', tag: a.id });
    refetch({ requestPolicy: 'network-only' });
    recount({ requestPolicy: 'network-only' });
  }, [opened.data, refetch, recount, notifications.on]);

  const [changed] = useSubscription({ query: ApprovalChanged });
  useEffect(() => {
    if (!changed.data) return;
    refetch({ requestPolicy: 'network-only' });
    recount({ requestPolicy: 'network-only' });
  }, [changed.data, refetch, recount]);

  const all = data?.approvals.edges.map((e) => readFragment(ApprovalRow, e.node)) ?? [];
  const rows = all.filter((a) => matches(filter, a, now));
  const processes = [...new Set(all.map((a) => a.processKey))].sort();
  const tools = [...new Set(all.map((a) => a.toolRef))].sort();
  const move = (by: number) => {
    const next = Math.min(Math.max(current + by, 0), rows.length - 1);
    setCurrent(next);
    table.current?.querySelectorAll<HTMLAnchorElement>('tbody a.row-link')[next]?.focus();
  };
  useShortcut('j', () => move(1));
  useShortcut('k', () => move(-1));
  useShortcut('o', () => rows[current] && router.push(`/approvals/${rows[current].id}`));

  return (
    <section>
      <div className="page-head">
        <h1>Approvals</h1>
        {waiting != null ? (
          <span className="count" data-testid="waiting-count" title="Pending approvals you may decide">
            {waiting} waiting for you
          </span>
        ) : null}
        {notifications.button}
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
        <Filters value={filter} onChange={setFilter} processes={processes} tools={tools} />
      </div>
      <p className="muted small">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous row, <kbd>Enter</kbd> or <kbd>o</kbd> open.
        {rows.length !== all.length ? ` Showing ${rows.length} of ${all.length} loaded.` : ''}
      </p>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {!data && fetching ? <p className="muted">Loading…</p> : null}
      {data && all.length > 0 && rows.length === 0 ? <p className="empty">No approval matches these filters.</p> : null}
      {data && all.length === 0 ? <p className="empty">Nothing waiting for you. New approvals appear here as they arrive.</p> : null}
      {rows.length > 0 ? (
        <div className="table-wrap">
          <table className="list" data-testid="approvals" ref={table}>
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
              {rows.map((a, i) => (
                <tr
                  key={a.id}
                  className={[fresh.includes(a.id) ? 'fresh' : '', i === current ? 'current' : ''].join(' ').trim() || undefined}
                  onFocus={() => setCurrent(i)} data-approval-id={a.id} data-instance-id={a.processInstanceId}>
                  <td>
                    <Link href={`/approvals/${a.id}`} className="strong row-link">
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
