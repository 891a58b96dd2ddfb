/** Field-level differences between two JSON values, for proposals edited by an approver. */
export interface Change {
  path: string;
  before: unknown;
  after: unknown;
}

export function diffJson(before: unknown, after: unknown, path = ''): Change[] {
  const isObj = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(before) && isObj(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffJson(before[k], after[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((v, i) => diffJson(v, after[i], `${path}[${i}]`));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '$', before, after }];
}

/** `amount: 89 → 80, note: (none) → "partial"` */
export function describeChanges(before: unknown, after: unknown): string {
  const fmt = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));
  const changes = diffJson(before, after);
  return changes.length
    ? changes.map((c) => `${c.path}: ${fmt(c.before)} → ${fmt(c.after)}`).join(', ')
    : 'no changes';
}
