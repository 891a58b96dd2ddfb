'use client';
/**
 * Definitions: the process as a picture (latest version of the chosen key), every version with its
 * frozen bindings, the tool servers, and — for admins only — the deploy editor.
 */
import { useState } from 'react';
import { useQuery } from 'urql';
import { DeployForm } from '../../components/DeployForm';
import { isSpec } from '../../components/flow/graph';
import { ProcessPicture } from '../../components/flow/ProcessPicture';
import { sentence } from '../../lib/errors';
import { when } from '../../lib/format';
import { DefinitionsQuery, MeQuery } from '../../lib/queries';

export default function DefinitionsPage() {
  const [{ data, error }, refetch] = useQuery({ query: DefinitionsQuery });
  const [me] = useQuery({ query: MeQuery });
  const [chosen, setChosen] = useState('');
  const latest = new Map<string, NonNullable<typeof data>['definitions'][number]>();
  for (const d of data?.definitions ?? []) if ((latest.get(d.key)?.version ?? 0) < d.version) latest.set(d.key, d);
  const keys = [...latest.keys()].sort();
  const shown = latest.get(chosen) ?? latest.get(keys[0] ?? '');
  return (
    <section>
      <h1>Definitions</h1>
      {error ? <p className="error-box">{sentence(error)}</p> : null}
      {keys.length ? (
        <div className="filters">
          <label>
            Process{' '}
            <select value={shown?.key ?? ''} onChange={(e) => setChosen(e.target.value)}>
              {keys.map((k) => (
                <option key={k} value={k}>
                  {k} v{latest.get(k)?.version}
                </option>
              ))}
            </select>
          </label>
        </div>
      ) : null}
      {shown && isSpec(shown.spec) ? <ProcessPicture key={shown.id} spec={shown.spec} /> : null}
      {me.data?.me.kind === 'ADMIN' ? <DeployForm onDeployed={() => refetch({ requestPolicy: 'network-only' })} /> : null}
      {data ? (
        <>
          <h2>Tool servers</h2>
          {data.toolServers.length === 0 ? <p className="muted">None deployed.</p> : null}
          <ul className="plain">
            {data.toolServers.map((t) => (
              <li key={t.id}>
                <strong>{t.name}</strong> v{t.version} · {t.transport} {t.url ? <code>{t.url}</code> : null}
                {t.credential ? ` · credential ${t.credential}` : ''} <span className="muted small">{when(t.updatedAt)}</span>
              </li>
            ))}
          </ul>
          <h2>Process versions</h2>
          {data.definitions.map((d) => (
            <details key={d.id} className="card">
              <summary>
                <strong>{d.key}</strong> v{d.version} <span className="muted small">deployed {when(d.deployedAt)}</span>
              </summary>
              <p className="muted small">source sha256 {d.sourceSha256}</p>
              {d.bindings.map((nb) => (
                <div key={nb.nodeId}>
                  <h3 className="h4">Node {nb.nodeId} — frozen bindings</h3>
                  <div className="table-wrap">
                    <table className="list">
                      <thead>
                        <tr>
                          <th scope="col">Tool</th>
                          <th scope="col">Policy</th>
                          <th scope="col">Idempotency</th>
                          <th scope="col">Approvers</th>
                          <th scope="col">SLA</th>
                          <th scope="col">Endpoint</th>
                        </tr>
                      </thead>
                      <tbody>
                        {nb.bindings.map((b) => (
                          <tr key={b.ref}>
                            <td>
                              <code>{b.ref}</code>
                            </td>
                            <td>{b.policy.toLowerCase().replace('_', ' ')}</td>
                            <td>{b.idempotency.toLowerCase()}</td>
                            <td>{b.approvers.join(', ') || '—'}</td>
                            <td>{b.approvalSlaHours != null ? `${b.approvalSlaHours} h` : '—'}</td>
                            <td className="small">
                              {b.transport} <code>{b.url}</code>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                </div>
              ))}
            </details>
          ))}
        </>
      ) : null}
    </section>
  );
}
