/** The exact arguments as a readable table (path → value), redacted fields marked, and the raw JSON. */

/** Every leaf of the arguments with its path (`items[0].qty`); an empty object or list is a leaf too. */
export function flatten(value: unknown, prefix = ''): [string, unknown][] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return [[prefix || '(empty)', value]];
    return entries.flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return [[prefix, value]];
    return value.flatMap((v, i) => flatten(v, `${prefix}[${i}]`));
  }
  return [[prefix || '(value)', value]];
}

function isRedacted(path: string, value: unknown, redacted: string[]): boolean {
  if (value === '[redacted]') return true;
  return redacted.some((r) => {
    const p = r.replace(/^\$\.?/, '').replace(/^\//, '').replace(/\//g, '.');
    return p === path || path.startsWith(`${p}.`) || path.startsWith(`${p}[`);
  });
}

export function Arguments({ args, redacted }: { args: unknown; redacted: string[] }) {
  const rows = flatten(args);
  return (
    <div>
      <table className="kv" data-testid="arguments">
        <tbody>
          {rows.map(([path, value]) => {
            const r = isRedacted(path, value, redacted);
            return (
              <tr key={path} className={r ? 'redacted' : undefined}>
                <th scope="row">{path}</th>
                <td>
                  <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
                  {r ? <span className="badge redacted-badge">redacted</span> : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <details>
        <summary>Raw JSON</summary>
        <pre className="code">{JSON.stringify(args, null, 2)}</pre>
      </details>
    </div>
  );
}
