'use client';
/** Deploy YAML; validation errors are shown against a line-numbered copy of the source, at their lines. */
import { useState } from 'react';
import { useMutation } from 'urql';
import { sentence } from '../lib/errors';
import { DeployMutation } from '../lib/queries';

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
  const errors = errorsOf(state.error?.graphQLErrors[0]?.extensions);
  const byLine = new Map<number, AplError[]>();
  for (const e of errors) if (e.line != null) byLine.set(e.line, [...(byLine.get(e.line) ?? []), e]);
  const lines = (checked ?? '').split('\n');
  return (
    <section className="card">
      <h2>Deploy</h2>
      <form className="stack" onSubmit={(e) => (e.preventDefault(), submit())}>
        <label htmlFor="yaml">APL source (ToolServer and Process documents, separated by ---)</label>
        <textarea
          id="yaml"
          className="mono"
          rows={14}
          spellCheck={false}
          value={source}
          onChange={(e) => setSource(e.target.value)}
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
                  {e.line != null ? <a href={`#src-line-${e.line}`}>line {e.line}</a> : 'no line'} · <code>{e.code}</code>{' '}
                  {e.message} <span className="muted small">{e.path}</span>
                </li>
              ))}
            </ul>
          ) : null}
          {errors.length ? (
            <ol className="source" aria-label="Source with errors marked">
              {lines.map((text, i) => {
                const n = i + 1;
                const here = byLine.get(n);
                return (
                  <li key={n} id={`src-line-${n}`} className={here ? 'has-error' : undefined} data-line={n}>
                    <span className="ln" aria-hidden="true">
                      {n}
                    </span>
                    <code>{text || ' '}</code>
                    {here?.map((e) => (
                      <span key={e.code + e.path} className="line-error" data-testid="line-error">
                        ⚠ {e.code}: {e.message}
                      </span>
                    ))}
                  </li>
                );
              })}
            </ol>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
