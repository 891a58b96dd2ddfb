'use client';
/** Home: what needs me now (my pending approvals, open incidents, failing workers), then 14 days in charts. */
import Link from 'next/link';
import { useQuery } from 'urql';
import { StateBadge } from '../components/Badges';
import { ApprovalsChart, CostChart, IncidentsChart } from '../components/home/DailyCharts';
import { sentence } from '../lib/errors';
import { timeLeft, when } from '../lib/format';
import { DailyStatsQuery, NeedsMeQuery } from '../lib/queries';

export default function Home() {
  const [needs] = useQuery({ query: NeedsMeQuery });
  const [stats] = useQuery({ query: DailyStatsQuery, variables: { days: 14 } });
  const n = needs.data;
  const failing = n?.workers.filter((w) => w.health !== 'ONLINE') ?? [];
  return (
    <section>
      <h1>What needs you</h1>
      {needs.error ? <p className="error-box">{sentence(needs.error)}</p> : null}
      <div className="grid3" data-testid="needs-me">
        <section className="card" aria-labelledby="need-approvals">
          <h2 id="need-approvals">
            <Link href="/approvals">Approvals waiting for you</Link>{' '}
            <span className="count" data-testid="need-approvals-count">{n?.approvals.totalCount ?? '…'}</span>
          </h2>
          <ul className="plain">
            {n?.approvals.edges.map(({ node: a }) => (
              <li key={a.id}>
                <Link href={`/approvals/${a.id}`}>
                  {a.server} / {a.tool}
                </Link>{' '}
                <span className={`badge risk-${a.risk.toLowerCase()}`}>risk: {a.risk.toLowerCase()}</span>
                <div className="small">{a.impact}</div>
                <div className="muted small">{timeLeft(a.slaDueAt)}</div>
              </li>
            ))}
          </ul>
          {n && n.approvals.totalCount === 0 ? <p className="muted">Nothing waits for you.</p> : null}
        </section>
        <section className="card" aria-labelledby="need-incidents">
          <h2 id="need-incidents">
            <Link href="/incidents">Open incidents</Link>{' '}
            <span className="count">{n?.incidents.totalCount ?? '…'}</span>
          </h2>
          <ul className="plain">
            {n?.incidents.edges.map(({ node: i }) => (
              <li key={i.id}>
                <strong>{i.type.replace(/_/g, ' ').toLowerCase()}</strong>{' '}
                <span className="muted small">{when(i.createdAt)}</span>
                <div className="small">{i.message}</div>
              </li>
            ))}
          </ul>
          {n && n.incidents.totalCount === 0 ? <p className="muted">No open incidents.</p> : null}
        </section>
        <section className="card" aria-labelledby="need-workers">
          <h2 id="need-workers">
            <Link href="/workers">Workers not online</Link> <span className="count">{n ? failing.length : '…'}</span>
          </h2>
          <ul className="plain">
            {failing.map((w) => (
              <li key={w.workerId}>
                {w.workerId} <StateBadge state={w.health} />
                {w.lastRejectionReason ? <div className="small">{w.lastRejectionReason}</div> : null}
              </li>
            ))}
          </ul>
          {n && failing.length === 0 ? <p className="muted">Every worker is online.</p> : null}
        </section>
      </div>
      <h2 className="h1-like">The last 14 days</h2>
      {stats.error ? <p className="error-box">{sentence(stats.error)}</p> : null}
      {stats.data ? (
        <div className="charts" data-from={stats.data.dailyStats.from} data-to={stats.data.dailyStats.to}>
          <ApprovalsChart stats={stats.data.dailyStats} />
          <CostChart stats={stats.data.dailyStats} />
          <IncidentsChart stats={stats.data.dailyStats} />
        </div>
      ) : (
        <p className="muted">Loading…</p>
      )}
    </section>
  );
}
