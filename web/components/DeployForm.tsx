'use client';
/** Deploy YAML in a code editor; the validation errors are marked at their lines and listed below it. */
import { useMemo, useState } from 'react';
import { useMutation } from 'urql';
import { sentence } from '../lib/errors';
import { DeployMutation } from '../lib/queries';
import { DeployEditor } from './DeployEditor';

interface AplError {
  code: string;
  path: string;
  line: number | null;
  column?: number | null;
  message: string;
}

function errorsOf(extensions: Record<string, unknown> | undefined): AplError[] {
  const list = extensions?.errors;
  return Array.isArray(list) ? (list as AplError[]) : [];
}

export function DeployForm({ onDeployed }: { onDeployed(): void }) {
  const [source, setSource] = useState('');
  const [checked, setChecked] = useState<string | null>(null);
  const [state, deploy] = useMutation(DeployMutation);
  const [ok, setOk] = useState<string | null>(null);
  const submit = async () => {
    setOk(null);
    setChecked(source);
    const r = await deploy({ source });
    if (!r.error && r.data) {
      const d = r.data.deploy;
      setOk(
        `Deployed: ${[...d.toolServers.map((t) => `tool server ${t.name} v${t.version}`), ...d.definitions.map((x) => `${x.key} v${x.version}`)].join(', ')}.`,
      );
      onDeployed();
    }
  };
  const errors = useMemo(() => errorsOf(state.error?.graphQLErrors[0]?.extensions), [state.error]);
  return (
    <section className="card">
      <h2>Deploy</h2>
      <form className="stack" onSubmit={(e) => (e.preventDefault(), submit())}>
        <p id="yaml-label" className="strong">
          APL source (ToolServer and Process documents, separated by ---)
        </p>
        <DeployEditor
          value={source}
          onChange={setSource}
          errors={errors}
          checked={state.error ? checked : null}
          label="APL source (ToolServer and Process documents, separated by ---)"
        />
        <div className="actions">
          <button type="submit" className="primary" disabled={!source.trim() || state.fetching}>
            Validate and deploy
          </button>
        </div>
      </form>
      {ok ? (
        <p className="ok-box" role="status">
          {ok}
        </p>
      ) : null}
      {state.error ? (
        <div role="alert" data-testid="deploy-errors">
          <p className="error-box">
            {errors.length
              ? `The definition was not deployed: ${errors.length} error${errors.length > 1 ? 's' : ''}.`
              : sentence(state.error)}
          </p>
          {errors.length ? (
            <ul className="plain errors">
              {errors.map((e) => (
                <li key={`${e.code}-${e.path}-${e.line}`}>
                  {e.line != null ? <strong>line {e.line}</strong> : 'no line'} · <code>{e.code}</code>{' '}
                  {e.message} <span className="muted small">{e.path}</span>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
