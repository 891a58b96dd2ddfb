/** Earlier versions of the same call as a diff, and every decision on this approval. */
import { when } from '../../lib/format';
import { StateBadge } from '../Badges';

interface Earlier {
  approvalId: string;
  attempt: number;
  sequence: number;
  state: string;
  createdAt: string;
  changes: readonly { path: string; before: unknown; after: unknown }[];
}

export function EarlierVersions({ earlier, version }: { earlier: readonly Earlier[]; version: number }) {
  return (
    <section className="card" aria-labelledby="earlier-title" data-testid="earlier">
      <h2 id="earlier-title">Earlier versions of this call</h2>
      {earlier.length === 0 ? (
        <p className="muted">{version > 1 ? `Version ${version}: earlier versions were edits of this approval (see decisions).` : 'This is the first version.'}</p>
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
                <div className="table-wrap">
                  <table className="diff">
                    <caption className="sr-only">What changed since this version</caption>
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
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

interface Decision {
  id: string;
  decision: string;
  outcome: string;
  decidedBy: string;
  at: string;
  comment: string | null;
  digest: string;
  level: number | null;
}

export function DecisionHistory({ decisions }: { decisions: readonly Decision[] }) {
  return (
    <section className="card" aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decision history</h2>
      {decisions.length === 0 ? (
        <p className="muted">No decision yet.</p>
      ) : (
        <ol className="timeline" data-testid="decision-history">
          {decisions.map((d) => (
            <li key={d.id}>
              <strong>{d.decidedBy}</strong> {d.decision.toLowerCase()}d
              {d.level === null ? ' (counting for no level)' : ` at level ${d.level}`} —{' '}
              {d.outcome.replace(/_/g, ' ').toLowerCase()}{' '}
              <span className="muted small">
                {when(d.at)} · digest {d.digest.slice(0, 12)}…
              </span>
              {d.comment ? <p className="quote">“{d.comment}”</p> : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
