/**
 * Whose authority the call needs and who gave it: the rule that asked for the levels (or the tool's
 * approvers), and per level who decided which version. Every level decides the version that runs, so a
 * decision on version 1 is shown in version 1's column and never fills version 2's.
 */
import { type RuleLike, ruleLine } from '../../lib/rules';

export interface DecisionRow {
  id: string;
  action: string;
  decision: string;
  outcome: string;
  decidedBy: string;
  at: string;
  comment: string | null;
  digest: string;
  editedDigest: string | null;
  level: number | null;
  version: number;
}

interface Approval {
  state: string;
  level: number;
  levels: number;
  version: number;
  candidateGroups: readonly string[];
  decidedBy: string | null;
  rule: (RuleLike & { levels: readonly { groups: readonly string[] }[] }) | null;
  versions: readonly { version: number }[];
  decisions: readonly DecisionRow[];
}

/** Who asked for these levels: the rule, or the tool's approvers. */
export function RuleText({ a }: { a: Pick<Approval, 'rule' | 'candidateGroups'> }) {
  if (!a.rule) return <>the tool’s approvers ({a.candidateGroups.join(' or ')}); no rule matched</>;
  return <>{ruleLine(a.rule)}</>;
}

/** "Approved by the policy: rule 1 (amount <= 20, auto)": an auto rule's approval names its rule. */
export function policyDecision(a: Pick<Approval, 'rule' | 'decidedBy'>): string | null {
  if (a.decidedBy !== 'policy') return null;
  return a.rule
    ? `Approved by the policy: rule ${a.rule.index + 1} (${a.rule.when}, auto) — no person was asked`
    : 'Approved by the policy — no person was asked';
}

const accepted = (d: DecisionRow) => d.outcome === 'ACCEPTED' && d.action !== 'REVOKE';

function what(d: DecisionRow): string {
  if (d.decision === 'REJECT') return 'rejected';
  return d.editedDigest && d.editedDigest !== d.digest ? 'approved with changes' : 'approved';
}

/** The groups of level n (from 1): the rule's, else the candidates of the one level the approvers make. */
function groupsAt(a: Approval, n: number): string {
  const groups = a.rule?.levels[n - 1]?.groups ?? (a.levels === 1 ? a.candidateGroups : []);
  return groups.join(' or ') || '—';
}

/**
 * Level by version: each cell who decided that level of that version. Shown when the call needs more
 * than one level or has more than one version; one person on one version says it all in the history.
 */
export function LevelsByVersion({ a }: { a: Approval }) {
  const versions = [...new Set([...a.versions.map((v) => v.version), ...a.decisions.map((d) => d.version), a.version])].sort(
    (x, y) => x - y,
  );
  if (a.levels <= 1 && versions.length <= 1) return null;
  const levels: (number | null)[] = Array.from({ length: a.levels }, (_, i) => i + 1);
  // an approval with changes that counts for no level of its version still made that version
  if (a.decisions.some((d) => accepted(d) && d.level === null)) levels.push(null);
  const cell = (level: number | null, version: number) => {
    const here = a.decisions.filter((d) => accepted(d) && d.level === level && d.version === version);
    if (here.length > 0)
      return here.map((d) => (
        <span key={d.id} className="decided-by">
          <strong>{d.decidedBy}</strong> {what(d)}
        </span>
      ));
    if (version === a.version && a.state === 'PENDING' && level !== null)
      return <span className="badge state-pending">{level === a.level ? 'waiting' : `after level ${a.level}`}</span>;
    return <span className="muted">not decided</span>;
  };
  return (
    <div className="table-wrap">
      <table className="diff levels" data-testid="levels">
        <caption className="small">Who decided each level, version by version</caption>
        <thead>
          <tr>
            <th scope="col">Level</th>
            {versions.map((v) => (
              <th scope="col" key={v}>
                Version {v}
                {v === a.version ? <span className="muted small"> (current)</span> : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {levels.map((level) => (
            <tr key={level ?? 'none'} data-level={level ?? 'none'}>
              <th scope="row">
                {level === null ? (
                  'changes only'
                ) : (
                  <>
                    {level} · {groupsAt(a, level)}
                  </>
                )}
              </th>
              {versions.map((v) => (
                <td key={v} data-version={v} data-label={`Version ${v}${v === a.version ? ' (current)' : ''}`}>
                  {cell(level, v)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
