'use client';
/**
 * One approval, in the order seed 001 §四.3 asks an approver to read it: the operation (and the tool
 * server's own description, labelled as such), the target and every argument, the impact with the
 * model's values marked, the basis, the facts, risk and reversibility, version, time left and validity,
 * who may decide and who you are, what happens on approval; then the decision, earlier versions and the
 * decision history.
 */
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useEffect, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { Arguments } from '../../../components/Arguments';
import { LevelsByVersion, policyDecision, RuleText } from '../../../components/approval/Authority';
import { DecisionHistory, EarlierVersions } from '../../../components/approval/History';
import { ImpactSentence } from '../../../components/approval/Impact';
import { VersionChange } from '../../../components/approval/Versions';
import { Basis } from '../../../components/Basis';
import { EscalatedBadge, StateBadge } from '../../../components/Badges';
import { DecideForm } from '../../../components/DecideForm';
import { RevokeForm } from '../../../components/RevokeForm';
import { sentence } from '../../../lib/errors';
import { json, timeLeft, when } from '../../../lib/format';
import { ApprovalChanged, ApprovalQuery, MeQuery } from '../../../lib/queries';

export default function ApprovalPage() {
  const { id } = useParams<{ id: string }>();
  const [{ data, error }, refetch] = useQuery({ query: ApprovalQuery, variables: { id } });
  const [me] = useQuery({ query: MeQuery });
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  // a refused decision keeps its form on screen even when the approval left PENDING with it (expired)
  const [refused, setRefused] = useState(false);
  const [changed] = useSubscription({ query: ApprovalChanged });
  useEffect(() => {
    if (changed.data?.approvalChanged.id === id) refetch({ requestPolicy: 'network-only' });
  }, [changed.data, id, refetch]);

  if (error) return <p className="error-box">{sentence(error)}</p>;
  if (!data) return <p className="muted">Loading…</p>;
  const a = data.approval;
  if (!a) return <p className="error-box">This approval does not exist, or you cannot see it.</p>;

  const principal = me.data?.me;
  const inGroup = !!principal && a.candidateGroups.some((g) => principal.groups.includes(g));
  const mayDecide = principal?.kind === 'HUMAN' && inGroup;
  // who may revoke: an admin, or a person whose decision on it was accepted (the engine checks again)
  const decidedIt = a.decisions.some((d) => d.outcome === 'ACCEPTED' && d.decidedBy === principal?.name);
  const mayRevoke = (a.state === 'APPROVED' || a.state === 'PENDING') && (principal?.kind === 'ADMIN' || decidedIt);
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  const byPolicy = a.decidedBy === 'policy';

  return (
    <article className="detail approval">
      <p>
        <Link href="/approvals">← Approvals</Link>
      </p>
      <div className="page-head">
        <h1>
          {a.server} / {a.tool}
        </h1>
        <StateBadge state={a.state} /> {a.escalated ? <EscalatedBadge /> : null}
        {a.voidReason ? <span className="badge state-rejected">voided: {a.voidReason.toLowerCase()}</span> : null}
      </div>

      <section className="card" aria-labelledby="op-title" data-testid="operation">
        <h2 id="op-title">1 · Operation</h2>
        <p>
          <code className="strong">{a.toolRef}</code> on tool server <strong>{a.server}</strong>
        </p>
        {a.toolDescription ? (
          <figure className="server-text" data-testid="tool-description">
            <figcaption className="muted small">The tool server's own description (its words, not Abada's):</figcaption>
            <blockquote>{a.toolDescription}</blockquote>
          </figure>
        ) : (
          <p className="muted small" data-testid="tool-description">The tool server sent no description of this tool.</p>
        )}
        <dl className="facts">
          <dt>Process</dt>
          <dd>{a.processKey}</dd>
          <dt>Instance</dt>
          <dd>
            <Link href={`/instances/${a.processInstanceId}`}>{a.processInstanceId}</Link>
          </dd>
          <dt>Agent node · model</dt>
          <dd>
            {a.nodeId} · {a.model ?? '—'}
          </dd>
          <dt>Attempt · step</dt>
          <dd>
            attempt {a.attempt}, step {a.sequence}
          </dd>
        </dl>
      </section>

      <section className="card" aria-labelledby="args-title">
        <h2 id="args-title">2 · Target and every argument</h2>
        <Arguments args={a.arguments} redacted={a.redactedPaths} />
        <VersionChange versions={a.versions} version={a.version} />
        <p className="small">
          Digest <code className="digest" data-testid="digest">{a.digest}</code>
        </p>
        <p className="muted small">Your decision is bound to this digest: if the call changes, it no longer applies.</p>
      </section>

      <section className="card" aria-labelledby="impact-title" data-testid="impact">
        <h2 id="impact-title">3 · Impact</h2>
        <p className="impact">
          {a.impact ? <ImpactSentence impact={a.impact} args={a.arguments} /> : `Calls ${a.toolRef} with the arguments above.`}
        </p>
        {a.impact ? (
          <p className="muted small">
            <mark className="from-model">Marked</mark> values are the model's arguments; the rest is the tool author's sentence.
          </p>
        ) : null}
        <p>
          <span className={`badge risk-${a.risk.toLowerCase()}`}>risk: {a.risk.toLowerCase()}</span>{' '}
          <span className={`badge ${a.reversible ? 'reversible' : 'irreversible'}`}>
            {a.reversible ? 'can be undone' : 'cannot be undone'}
          </span>
        </p>
      </section>

      <section className="card" aria-labelledby="basis-title">
        <h2 id="basis-title">4 · Why the agent asks</h2>
        <Basis basis={a.basis} />
      </section>

      <section className="card" aria-labelledby="facts-title" data-testid="facts">
        <h2 id="facts-title">5 · Facts read before proposing</h2>
        {a.facts != null ? (
          <>
            <p className="muted small">The precondition's read at proposal time; it is read again right before the call.</p>
            <pre className="code">{json(a.facts)}</pre>
          </>
        ) : (
          <p className="muted">No precondition is declared for this tool.</p>
        )}
      </section>

      <section className="card" aria-labelledby="bounds-title" data-testid="bounds">
        <h2 id="bounds-title">6 · Version, time and authority</h2>
        <dl className="facts">
          <dt>Version</dt>
          <dd data-testid="version">version {a.version} of this call</dd>
          <dt>Time left to decide</dt>
          <dd data-testid="time-left">
            {a.state !== 'PENDING'
              ? 'decided'
              : a.expiresAt
                ? `${timeLeft(a.expiresAt, now)} — then it expires as rejected (${when(a.expiresAt)})`
                : a.slaDueAt
                  ? `${timeLeft(a.slaDueAt, now)} until the SLA (${when(a.slaDueAt)}); no expiry`
                  : 'no deadline'}
          </dd>
          <dt>Valid after approval</dt>
          <dd data-testid="validity">
            {a.validUntil
              ? `the call must start by ${when(a.validUntil)} (${timeLeft(a.validUntil, now)}), else a new version is asked`
              : 'the call must start within the tool’s approval window, else a new version is asked'}
          </dd>
          <dt>Rule</dt>
          <dd data-testid="rule">
            <RuleText a={a} />
          </dd>
          <dt>Who may decide</dt>
          <dd>
            {byPolicy ? (
              'no person: the rule approved this call as the agent proposed it'
            ) : (
              <>
                a person in {a.candidateGroups.join(' or ')}
                {a.levels > 1 ? ` (level ${a.level} of ${a.levels}, version ${a.version})` : ''}; never the one who started the
                process
                {a.levels > 1 ? '; each level by a different person' : ''}
              </>
            )}
          </dd>
          <dt>You are</dt>
          <dd data-testid="you-are">
            {principal ? `${principal.name} (${principal.kind.toLowerCase()}${principal.groups.length ? `, ${principal.groups.join(', ')}` : ''})` : '…'}
            {' — '}
            {a.state !== 'PENDING' ? 'nothing is left to decide' : mayDecide ? 'you may decide' : 'you cannot decide this call'}
          </dd>
        </dl>
        <LevelsByVersion a={a} />
      </section>

      <section className="card" aria-labelledby="on-approval-title">
        <h2 id="on-approval-title">7 · What happens on approval</h2>
        <p data-testid="on-approval">{a.onApproval}</p>
      </section>

      <section className="card" aria-labelledby="decision-title">
        <h2 id="decision-title">Decision</h2>
        {a.state !== 'PENDING' ? (
          <p data-testid="decided">
            {a.state === 'RETIRED'
              ? 'This work was retired; the call will never run.'
              : a.state === 'REVOKED'
                ? 'Revoked: the call will not run; the agent reads the reason'
                : a.state === 'EXPIRED' && !a.decidedBy
                  ? `Expired: nobody decided in time${a.expiresAt ? ` (by ${when(a.expiresAt)})` : ''}`
                  : (policyDecision(a) ?? `${a.state.toLowerCase()} by ${a.decidedBy ?? '—'} on ${when(a.decidedAt)}`)}
            {a.comment ? ` — “${a.comment}”` : ''}
          </p>
        ) : null}
        {mayDecide && (a.state === 'PENDING' || refused) ? (
          <DecideForm
            // a new version is a new call to read: its form starts from its own arguments
            key={a.digest}
            approvalId={a.id}
            digest={a.digest}
            args={a.arguments}
            editable={a.editable}
            closed={a.state !== 'PENDING'}
            onDone={refresh}
            onRefused={() => {
              setRefused(true);
              refresh(); // the refused attempt joins the decision history below
            }}
          />
        ) : a.state === 'PENDING' ? (
          <p className="muted" data-testid="cannot-decide">
            {principal?.kind === 'WORKER'
              ? 'A worker credential can never decide.'
              : `Only a person in ${a.candidateGroups.join(' or ')} can decide this call. You can read it, not decide it.`}
          </p>
        ) : null}
        {mayRevoke ? <RevokeForm approvalId={a.id} onDone={refresh} /> : null}
      </section>

      <EarlierVersions earlier={a.earlierProposals} version={a.version} versions={a.versions} />
      <DecisionHistory decisions={a.decisions} byPolicy={byPolicy} />
    </article>
  );
}
