/**
 * Earlier versions of the same call — this approval's own versions and earlier proposals of the call —
 * and every decision on this approval, refused attempts included: a refusal is evidence too, so it stays
 * in the list, marked as refused with the reason in words.
 */
import { when } from '../../lib/format';
import { StateBadge } from '../Badges';
import type { DecisionRow } from './Authority';
import { DiffTable, VersionList } from './Versions';

interface Earlier {
  approvalId: string;
  attempt: number;
  sequence: number;
  state: string;
  createdAt: string;
  changes: readonly { path: string; before: unknown; after: unknown }[];
}

export function EarlierVersions({
  earlier,
  version,
  versions,
}: {
  earlier: readonly Earlier[];
  version: number;
  versions: Parameters<typeof VersionList>[0]['versions'];
}) {
  return (
    <section className="card" aria-labelledby="earlier-title" data-testid="earlier">
      <h2 id="earlier-title">Earlier versions of this call</h2>
      <VersionList versions={versions} version={version} />
      {earlier.length === 0 ? (
        versions.length > 1 ? null : (
          <p className="muted">{version > 1 ? `Version ${version}: opened again for the same call.` : 'This is the first version.'}</p>
        )
      ) : (
        <ul className="plain">
          {earlier.map((p) => (
            <li key={p.approvalId} className="earlier">
              <p>
                Attempt {p.attempt}, step {p.sequence} · <StateBadge state={p.state} /> · {when(p.createdAt)}
              </p>
              {p.changes.length === 0 ? (
                <p className="muted small">Same arguments as now.</p>
              ) : (
                <DiffTable changes={p.changes} before="Then" after="Now" caption="What changed since this version" />
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Why an attempt was refused, in words (the codes of SPEC §9). */
const REFUSED: Record<string, string> = {
  FORBIDDEN: 'not in a group that may decide',
  SEPARATION_OF_DUTIES: 'they started the process',
  STALE_DIGEST: 'the call had changed since they opened it',
  ALREADY_DECIDED: 'already decided',
  APPROVAL_EXPIRED: 'past the time to decide',
  INVALID_ARGUMENTS: 'their changes were not valid arguments',
  POLICY_DENIED: 'their changes were refused by policy',
  WORK_RETIRED: 'the work was retired',
  ALREADY_EXECUTING: 'the call had already started',
};

function verb(d: DecisionRow): string {
  if (d.action === 'REVOKE') return 'revoke';
  if (d.decision === 'REJECT') return 'reject';
  return d.editedDigest ? 'approve with changes' : 'approve';
}

const past = (v: string) => v.replace(/^(approve|reject|revoke)/, '$1d');

export function DecisionHistory({ decisions, byPolicy }: { decisions: readonly DecisionRow[]; byPolicy: boolean }) {
  return (
    <section className="card" aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decision history</h2>
      {decisions.length === 0 ? (
        <p className="muted">{byPolicy ? 'No person decided: an auto rule approved the call.' : 'No decision yet.'}</p>
      ) : (
        <ol className="timeline" data-testid="decision-history">
          {decisions.map((d) => {
            const refused = d.outcome !== 'ACCEPTED';
            // a refusal is recorded on the version current when it was tried, whatever digest was sent
            const where =
              d.level != null ? `level ${d.level} of version ${d.version}` : `version ${d.version}, for no level`;
            return (
              <li key={d.id} className={refused ? 'refused' : undefined} data-outcome={d.outcome}>
                {refused ? (
                  <>
                    <span className="badge state-rejected">refused</span> <strong>{d.decidedBy}</strong> tried to{' '}
                    {verb(d)} at {where} —{' '}
                    <span className="refusal-reason">
                      {REFUSED[d.outcome] ?? d.outcome.replace(/_/g, ' ').toLowerCase()}
                    </span>
                  </>
                ) : (
                  <>
                    <strong>{d.decidedBy}</strong> {past(verb(d))} at {where}
                  </>
                )}{' '}
                <span className="muted small">
                  {when(d.at)} · digest {d.digest.slice(0, 12)}…
                </span>
                {d.comment ? <p className="quote">“{d.comment}”</p> : null}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
