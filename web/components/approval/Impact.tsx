/**
 * The impact sentence with every value that came from the model's arguments marked: the sentence is the
 * tool author's template, the marked words are what the model chose. The arguments' scalar values are
 * looked for in the sentence, longest first, as whole words. The sentence stays one sentence for a
 * screen reader (the legend under it says what the marks mean; `<mark>` is announced as highlighted).
 */
import type { ReactNode } from 'react';

function scalars(value: unknown, path = ''): [string, string][] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      scalars(v, Array.isArray(value) ? `${path}[${k}]` : path ? `${path}.${k}` : k),
    );
  }
  const text = String(value);
  return text.trim() === '' || text === '[redacted]' ? [] : [[path, text]];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function ImpactSentence({ impact, args }: { impact: string; args: unknown }) {
  const values = scalars(args).sort((a, b) => b[1].length - a[1].length);
  if (values.length === 0) return <>{impact}</>;
  const pattern = new RegExp(`(?<![\\w.])(${values.map(([, v]) => escape(v)).join('|')})(?![\\w])`, 'g');
  const parts: ReactNode[] = [];
  let last = 0;
  for (const m of impact.matchAll(pattern)) {
    const at = m.index ?? 0;
    if (at > last) parts.push(impact.slice(last, at));
    const path = values.find(([, v]) => v === m[0])?.[0] ?? '';
    parts.push(
      <mark key={at} className="from-model" title={`from the model's argument ${path}`} data-argument={path}>
        {m[0]}
      </mark>,
    );
    last = at + m[0].length;
  }
  if (last < impact.length) parts.push(impact.slice(last));
  return <>{parts}</>;
}
