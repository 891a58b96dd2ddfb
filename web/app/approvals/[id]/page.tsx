'use client';
/** One approval: what would run, where it comes from, what changed since earlier proposals, who decided. */
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useEffect } from 'react';
import { useQuery, useSubscription } from 'urql';
import { Arguments } from '../../../components/Arguments';
import { Basis } from '../../../components/Basis';
import { EscalatedBadge, StateBadge } from '../../../components/Badges';
import { DecideForm } from '../../../components/DecideForm';
import { RevokeForm } from '../../../components/RevokeForm';
import { sentence } from '../../../lib/errors';
import { timeLeft, when } from '../../../lib/format';
import { ApprovalChanged, ApprovalQuery, MeQuery, ProcessKeyQuery } from '../../../lib/queries';

export default function ApprovalPage() {
  const { id } = useParams<{ id: string }>();
  const [{ data, error }, refetch] = useQuery({ query: ApprovalQuery, variables: { id } });
  const [me] = useQuery({ query: MeQuery });
  const a = data?.approval;
  const [proc] = useQuery({
    query: ProcessKeyQuery,
    variables: { id: a?.processInstanceId ?? '' },
    pause: !a,
  });
  const [changed] = useSubscription({ query: ApprovalChanged });
  useEffect(() => {
    if (changed.data?.approvalChanged.id === id) refetch({ requestPolicy: 'network-only' });
  }, [changed.data, id, refetch]);

  if (error) return <p className="error-box">{sentence(error)}</p>;
  if (!data) return <p className="muted">Loading…</p>;
  if (!a) return <p className="error-box">This approval does not exist, or you cannot see it.</p>;

  const principal = me.data?.me;
  const inGroup = !!principal && a.candidateGroups.some((g) => principal.groups.includes(g));
  const mayDecide = principal?.kind === 'HUMAN' && inGroup;
  // who may revoke: an admin, or a person whose decision on it was accepted (the engine checks again)
  const decidedIt = a.decisions.some((d) => d.outcome === 'ACCEPTED' && d.decidedBy === principal?.name);
  const mayRevoke =
    (a.state === 'APPROVED' || a.state === 'PENDING') && (principal?.kind === 'ADMIN' || decidedIt);
  const instance = proc.data?.processInstance;

  return (
    <article className="detail">
      <p>
        <Link href="/approvals">← Approvals</Link>
      </p>
      <div className="page-head">
        <h1>
          {a.server} / {a.tool}
        </h1>
        <StateBadge state={a.state} /> {a.escalated ? <EscalatedBadge /> : null}
      </div>
      <section className="card" data-testid="impact">
        <h2>What this call does</h2>
        <p className="impact">{a.impact ?? `Calls ${a.toolRef} with the arguments below.`}</p>
        <p>
          <span className={`badge risk-${a.risk.toLowerCase()}`}>risk: {a.risk.toLowerCase()}</span>{' '}
          <span className={`badge ${a.reversible ? 'reversible' : 'irreversible'}`}>
            {a.reversible ? 'can be undone' : 'cannot be undone'}
          </span>
        </p>
        <p className="muted small">
          {a.expiresAt && a.state === 'PENDING' ? `Decide by ${when(a.expiresAt)} (${timeLeft(a.expiresAt)}); after that it expires as rejected. ` : ''}
          {a.validUntil ? `Approved: the call must start by ${when(a.validUntil)}, else a new approval is asked.` : ''}
        </p>
      </section>
      <div className="grid2">
        <section className="card">
          <h2>Where it comes from</h2>
          <dl className="facts">
            <dt>Process</dt>
            <dd>{instance ? `${instance.key} v${instance.version}` : '…'}</dd>
            <dt>Instance</dt>
            <dd>
              <Link href={`/instances/${a.processInstanceId}`}>{a.processInstanceId}</Link>
            </dd>
            <dt>Agent node</dt>
            <dd>{a.nodeId}</dd>
            <dt>Model</dt>
            <dd>{a.model ?? '—'}</dd>
            <dt>Attempt / step</dt>
            <dd>
              attempt {a.attempt}, step {a.sequence}
            </dd>
            <dt>Tool</dt>
            <dd>
              <code>
                {a.server} / {a.tool}
              </code>
            </dd>
            <dt>Who may decide</dt>
            <dd>
              {a.candidateGroups.join(', ')}
              {a.levels > 1 ? ` (level ${a.level} of ${a.levels})` : ''}
            </dd>
            <dt>SLA</dt>
            <dd>
              {a.slaDueAt ? `${when(a.slaDueAt)} — ${a.state === 'PENDING' ? timeLeft(a.slaDueAt) : 'closed'}` : 'none'}
            </dd>
            <dt>Opened</dt>
            <dd>{when(a.createdAt)}</dd>
          </dl>
        </section>
        <section className="card">
          <h2>Exact arguments</h2>
          <Arguments args={a.arguments} redacted={a.redactedPaths} />
          <p className="small">
            Digest <code className="digest" data-testid="digest">{a.digest}</code>
          </p>
          <p className="muted small">Your decision is bound to this digest: if the call changes, it no longer applies.</p>
        </section>
      </div>

      <section className="card">
        <h2>Why the agent asks</h2>
        <Basis basis={a.basis} />
      </section>

      <section className="card">
        <h2>What happens on approval</h2>
        <p data-testid="on-approval">{a.onApproval}</p>
        <p className="muted small">Version {a.version} of this call.</p>
      </section>

      <section className="card">
        <h2>Decision</h2>
        {a.state !== 'PENDING' ? (
          <p data-testid="decided">
            {a.state === 'RETIRED'
              ? 'This work was retired; the call will never run.'
              : a.state === 'REVOKED'
                ? 'Revoked: the call will not run; the agent reads the reason'
                : `${a.state.toLowerCase()} by ${a.decidedBy ?? '—'} on ${when(a.decidedAt)}`}
            {a.comment ? ` — “${a.comment}”` : ''}
          </p>
        ) : null}
        {a.state === 'PENDING' && mayDecide ? (
          <DecideForm approvalId={a.id} digest={a.digest} onDone={() => refetch({ requestPolicy: 'network-only' })} />
        ) : a.state === 'PENDING' ? (
          <p className="muted" data-testid="cannot-decide">
            {principal?.kind === 'WORKER'
              ? 'A worker credential can never decide.'
              : `Only a person in ${a.candidateGroups.join(' or ')} can decide this call. You can read it, not decide it.`}
          </p>
        ) : null}
        {mayRevoke ? <RevokeForm approvalId={a.id} onDone={() => refetch({ requestPolicy: 'network-only' })} /> : null}
      </section>

      <section className="card">
        <h2>Earlier proposals of this call</h2>
        {a.earlierProposals.length === 0 ? (
          <p className="muted">This is the first proposal.</p>
        ) : (
          <ul className="plain">
            {a.earlierProposals.map((p) => (
              <li key={p.approvalId} className="earlier">
                <p>
                  Attempt {p.attempt}, step {p.sequence} · <StateBadge state={p.state} /> · {when(p.createdAt)}
                </p>
                {p.changes.length === 0 ? (
                  <p className="muted small">Same arguments.</p>
                ) : (
                  <table className="diff">
                    <thead>
                      <tr>
                        <th scope="col">Field</th>
                        <th scope="col">Then</th>
                        <th scope="col">Now</th>
                      </tr>
                    </thead>
                    <tbody>
                      {p.changes.map((c) => (
                        <tr key={c.path}>
                          <th scope="row">{c.path}</th>
                          <td className="before">
                            <del>{JSON.stringify(c.before) ?? '—'}</del>
                          </td>
                          <td className="after">
                            <ins>{JSON.stringify(c.after) ?? '—'}</ins>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="card">
        <h2>Decision history</h2>
        {a.decisions.length === 0 ? (
          <p className="muted">No decision yet.</p>
        ) : (
          <ol className="timeline">
            {a.decisions.map((d) => (
              <li key={d.id}>
                <strong>{d.decidedBy}</strong> {d.decision.toLowerCase()}d — {d.outcome.replace(/_/g, ' ').toLowerCase()}{' '}
                <span className="muted small">
                  {when(d.at)} · digest {d.digest.slice(0, 12)}…
                </span>
                {d.comment ? <p className="quote">“{d.comment}”</p> : null}
              </li>
            ))}
          </ol>
        )}
      </section>
    </article>
  );
}
