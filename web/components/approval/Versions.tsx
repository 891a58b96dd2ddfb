/**
 * The versions of one approval: version 1 as the agent proposed it, then each approval with changes —
 * who made it and what it changed against the version before. The current version's change sits next to
 * the arguments, because the person deciding it must see what someone else changed before they agree.
 */
import { when } from '../../lib/format';

export interface Change {
  path: string;
  before: unknown;
  after: unknown;
}

interface Version {
  version: number;
  digest: string;
  editedBy: string | null;
  createdAt: string;
  changes: readonly Change[];
}

const shown = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** Field, before, after: what changed from one version of the arguments to another. */
export function DiffTable({
  changes,
  before,
  after,
  caption,
  testId,
}: {
  changes: readonly Change[];
  before: string;
  after: string;
  caption: string;
  testId?: string;
}) {
  return (
    <div className="table-wrap">
      <table className="diff" data-testid={testId}>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">{before}</th>
            <th scope="col">{after}</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.path}>
              <th scope="row">{c.path}</th>
              <td className="before">
                <del>{shown(c.before)}</del>
              </td>
              <td className="after">
                <ins>{shown(c.after)}</ins>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Beside the arguments: the current version was made by a person's changes, and which. */
export function VersionChange({ versions, version }: { versions: readonly Version[]; version: number }) {
  const current = versions.find((v) => v.version === version);
  if (!current?.editedBy || version <= 1) return null;
  return (
    <div className="version-change" data-testid="version-change">
      <p>
        <span className="badge state-proposed">version {version}</span> <strong>{current.editedBy}</strong> approved
        version {version - 1} with changes on {when(current.createdAt)}. The arguments above are theirs; what they
        changed:
      </p>
      <DiffTable
        changes={current.changes}
        before={`Version ${version - 1}`}
        after={`Version ${version}`}
        caption={`What ${current.editedBy} changed from version ${version - 1}`}
        testId="version-diff"
      />
    </div>
  );
}

/** Every version of this approval, oldest first, each with who made it and its change. */
export function VersionList({ versions, version }: { versions: readonly Version[]; version: number }) {
  if (versions.length <= 1) return null;
  return (
    <ol className="plain versions" data-testid="versions">
      {versions.map((v) => (
        <li key={v.version} className="earlier">
          <p>
            <strong>Version {v.version}</strong>
            {v.version === version ? ' (current)' : ''} —{' '}
            {v.editedBy ? `${v.editedBy} approved with changes` : v.version === 1 ? 'as the agent proposed it' : 'opened again, same arguments'}{' '}
            <span className="muted small">
              · {when(v.createdAt)} · digest {v.digest.slice(0, 12)}…
            </span>
          </p>
          {v.changes.length > 0 ? (
            <DiffTable
              changes={v.changes}
              before={`Version ${v.version - 1}`}
              after={`Version ${v.version}`}
              caption={`What changed from version ${v.version - 1} to version ${v.version}`}
            />
          ) : null}
        </li>
      ))}
    </ol>
  );
}
