/**
 * Approve with changes: one field per argument, typed as the agent sent it (a number stays a number),
 * and the person's own changes listed live, so they read what they are about to change before the
 * engine judges it. Redacted values cannot be edited: the engine keeps the value the approver never saw.
 */
import { flatten } from '../Arguments';

type Leaf = { path: string; original: string | number | boolean | null };

/** The arguments' scalar leaves (an empty object or list is left as it is). */
export function leavesOf(args: unknown): Leaf[] {
  return flatten(args)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([path, v]) => ({ path, original: v as Leaf['original'] }));
}

/** The text a field starts with. */
export function fieldsOf(args: unknown): Record<string, string> {
  return Object.fromEntries(leavesOf(args).map((l) => [l.path, l.original === null ? '' : String(l.original)]));
}

/** "items[0].qty" → ["items", 0, "qty"] */
function segments(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]));
}

function setAt(root: unknown, path: string, value: unknown) {
  const keys = segments(path);
  let node = root as Record<string | number, unknown>;
  for (const k of keys.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  node[keys[keys.length - 1]] = value;
}

export interface Edit {
  /** the arguments to send, or null when nothing changed */
  args: Record<string, unknown> | null;
  changes: { path: string; before: unknown; after: unknown }[];
  problems: string[];
}

/** The edited arguments from the fields, each value read back in its original type. */
export function readEdit(args: unknown, fields: Record<string, string>): Edit {
  const out = structuredClone(args) as Record<string, unknown>;
  const changes: Edit['changes'] = [];
  const problems: string[] = [];
  for (const { path, original } of leavesOf(args)) {
    const text = fields[path] ?? '';
    let value: unknown = text;
    if (typeof original === 'number') {
      value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) {
        problems.push(`${path} must be a number.`);
        continue;
      }
    } else if (typeof original === 'boolean') value = text === 'true';
    else if (original === null) value = text === '' ? null : text;
    if (value !== original) {
      changes.push({ path, before: original, after: value });
      setAt(out, path, value);
    }
  }
  return { args: changes.length > 0 && problems.length === 0 ? out : null, changes, problems };
}

const REDACTED = '[redacted]';

export function ArgumentsEditor({
  args,
  fields,
  onChange,
  edit,
  describedBy,
  invalid,
}: {
  args: unknown;
  fields: Record<string, string>;
  onChange(path: string, value: string): void;
  edit: Edit;
  /** the engine's refusal, which the fieldset (and the refused fields) point at */
  describedBy?: string;
  /** the engine refused these changes: the changed fields are marked */
  invalid: boolean;
}) {
  return (
    <fieldset className="edit-args" aria-describedby={describedBy}>
      <legend>Arguments to approve</legend>
      <div className="edit-grid">
        {leavesOf(args).map(({ path, original }) => {
          const id = `edit-${path.replace(/[^\w-]/g, '_')}`;
          if (original === REDACTED)
            return (
              <div key={path} className="edit-field">
                <label htmlFor={id}>{path}</label>
                <input id={id} type="text" value={REDACTED} disabled aria-describedby={`${id}-note`} />
                <span id={`${id}-note`} className="muted small">
                  redacted: the engine keeps the value
                </span>
              </div>
            );
          if (typeof original === 'boolean')
            return (
              <div key={path} className="edit-field">
                <label>
                  <input
                    type="checkbox"
                    checked={fields[path] === 'true'}
                    onChange={(e) => onChange(path, String(e.target.checked))}
                  />{' '}
                  {path}
                </label>
              </div>
            );
          // a value the engine refused, or one that is not of its type, is marked on its own field
          const bad =
            edit.problems.some((p) => p.startsWith(`${path} `)) ||
            (invalid && edit.changes.some((c) => c.path === path));
          return (
            <div key={path} className="edit-field">
              <label htmlFor={id}>{path}</label>
              <input
                id={id}
                type="text"
                inputMode={typeof original === 'number' ? 'decimal' : undefined}
                value={fields[path] ?? ''}
                onChange={(e) => onChange(path, e.target.value)}
                aria-invalid={bad || undefined}
                aria-describedby={bad ? describedBy : undefined}
              />
            </div>
          );
        })}
      </div>
      {edit.problems.length > 0 ? (
        <ul className="error-text small" data-testid="edit-problems">
          {edit.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      ) : edit.changes.length > 0 ? (
        <p className="small" data-testid="my-changes">
          You change:{' '}
          {edit.changes.map((c, i) => (
            <span key={c.path}>
              {i > 0 ? ', ' : ''}
              <code>{c.path}</code> <del>{JSON.stringify(c.before)}</del> → <ins>{JSON.stringify(c.after)}</ins>
            </span>
          ))}
        </p>
      ) : (
        <p className="muted small">Nothing changed yet: Approve approves the call as it is.</p>
      )}
    </fieldset>
  );
}
