'use client';
/**
 * One principal on the admin page: kind, project, groups (or a worker's topics), state; and the admin's
 * actions: edit the groups or topics, rotate the token (the new one shown once), disable (final).
 */
import { useId, useState } from 'react';
import { type CombinedError, useMutation } from 'urql';
import { codeOfError, sentence } from '../lib/errors';
import { when } from '../lib/format';
import type { ResultOf } from '../lib/graphql';
import {
  DisablePrincipalMutation,
  type PrincipalRow,
  RotatePrincipalTokenMutation,
  UpdatePrincipalMutation,
} from '../lib/queries';

export type PrincipalData = ResultOf<typeof PrincipalRow>;
type Mode = 'idle' | 'edit' | 'rotate' | 'disable';

/** The engine's own message for refusals about principals (it says what to do); the usual sentence otherwise. */
function problem(error: CombinedError | undefined): string | null {
  const code = codeOfError(error);
  if (code === 'VALIDATION_FAILED' || code === 'FORBIDDEN') return error?.graphQLErrors[0]?.message ?? null;
  return sentence(error);
}

const names = (text: string) =>
  text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);

export function PrincipalCard({ p, onChanged }: { p: PrincipalData; onChanged(): void }) {
  const uid = useId();
  const worker = p.kind === 'WORKER';
  const members = worker ? p.topics : p.groups;
  const [mode, setMode] = useState<Mode>('idle');
  const [draft, setDraft] = useState(members.join(', '));
  const [token, setToken] = useState<string | null>(null);
  const [updating, update] = useMutation(UpdatePrincipalMutation);
  const [rotating, rotate] = useMutation(RotatePrincipalTokenMutation);
  const [disabling, disable] = useMutation(DisablePrincipalMutation);
  const error = problem(updating.error ?? rotating.error ?? disabling.error);
  const busy = updating.fetching || rotating.fetching || disabling.fetching;

  const save = async () => {
    const list = names(draft);
    const r = await update({ input: { id: p.id, ...(worker ? { topics: list } : { groups: list }) } });
    if (!r.error) {
      setMode('idle');
      onChanged();
    }
  };
  const doRotate = async () => {
    const r = await rotate({ id: p.id });
    if (r.data) {
      setToken(r.data.rotatePrincipalToken.token);
      setMode('idle');
    }
  };
  const doDisable = async () => {
    const r = await disable({ id: p.id });
    if (!r.error) {
      setMode('idle');
      onChanged();
    }
  };

  return (
    <li className="card principal" data-principal={p.name}>
      <h2 className="h3">
        {p.name} <span className="badge">{p.kind.toLowerCase()}</span>{' '}
        <span className={`badge state-${p.disabled ? 'disabled' : 'enabled'}`}>{p.disabled ? 'disabled' : 'enabled'}</span>
      </h2>
      <dl className="facts">
        <dt>{worker ? 'Topics' : 'Groups'}</dt>
        <dd data-testid="members">{members.length ? members.join(', ') : '—'}</dd>
        <dt>Project</dt>
        <dd>{p.projectId ?? 'all (global worker)'}</dd>
        <dt>{p.disabled ? 'Disabled' : 'Created'}</dt>
        <dd>{when(p.disabled ? p.disabledAt : p.createdAt)}</dd>
      </dl>
      {token ? <NewToken name={p.name} token={token} onDone={() => setToken(null)} /> : null}
      {mode === 'edit' ? (
        <form className="stack" onSubmit={(e) => (e.preventDefault(), save())}>
          <label htmlFor={`${uid}-m`}>{worker ? 'Topics' : 'Groups'} (separated by commas; replaces the current ones)</label>
          <input id={`${uid}-m`} value={draft} onChange={(e) => setDraft(e.target.value)} />
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              Save
            </button>
            <button type="button" onClick={() => setMode('idle')}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {mode === 'rotate' ? (
        <Confirm
          text={`Give ${p.name} a new token? The current one stops working at once, on every engine.`}
          action="Rotate token"
          busy={busy}
          onConfirm={doRotate}
          onCancel={() => setMode('idle')}
        />
      ) : null}
      {mode === 'disable' ? (
        <Confirm
          text={`Disable ${p.name}? Its tokens and open sessions stop at once, on every engine. This cannot be undone.`}
          action={`Disable ${p.name}`}
          danger
          busy={busy}
          onConfirm={doDisable}
          onCancel={() => setMode('idle')}
        />
      ) : null}
      {mode === 'idle' && !p.disabled ? (
        <div className="actions">
          <button type="button" onClick={() => (setDraft(members.join(', ')), setMode('edit'))}>
            Edit {worker ? 'topics' : 'groups'}
          </button>
          <button type="button" onClick={() => setMode('rotate')}>
            Rotate token…
          </button>
          <button type="button" onClick={() => setMode('disable')}>
            Disable…
          </button>
        </div>
      ) : null}
      {error ? (
        <p className="error-box" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}

function NewToken({ name, token, onDone }: { name: string; token: string; onDone(): void }) {
  return (
    <div className="ok-box stack" role="status">
      <p>New token for {name}, shown once: copy it now. The old token no longer works.</p>
      <code className="digest" data-testid="new-token">
        {token}
      </code>
      <div className="actions">
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function Confirm(props: {
  text: string;
  action: string;
  danger?: boolean;
  busy: boolean;
  onConfirm(): void;
  onCancel(): void;
}) {
  return (
    <div className="stack" role="group" aria-label="Confirm">
      <p>{props.text}</p>
      <div className="actions">
        <button type="button" className={props.danger ? 'danger' : 'primary'} disabled={props.busy} onClick={props.onConfirm}>
          {props.action}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
