/**
 * Redaction of tool-call arguments for the approver's view (`card.number`, `items[].iban`, `items[0].iban`);
 * the call's digest covers the real ones. The worker redacts content in spans with the same paths.
 */

export const REDACTED = '[redacted]';

/** A segment: a key, optionally followed by `[]` (every element) or `[n]` (one element), repeatable. */
export type RedactStep = { key: string } | { each: true } | { index: number };

const SEGMENT = /^([A-Za-z_$][\w$-]*)?((?:\[\d*\])*)$/;

/** Parses `a.b`, `list[].field`, `list[0].field`; null when malformed. */
export function parseRedactPath(path: string): RedactStep[] | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > 256) return null;
  const steps: RedactStep[] = [];
  const parts = path.split('.');
  for (let p = 0; p < parts.length; p++) {
    const m = SEGMENT.exec(parts[p]);
    if (!m) return null;
    if (!m[1] && (p > 0 || !m[2])) return null;
    if (m[1]) steps.push({ key: m[1] });
    for (const b of m[2].match(/\[\d*\]/g) ?? []) {
      steps.push(b === '[]' ? { each: true } : { index: Number(b.slice(1, -1)) });
    }
  }
  return steps;
}

/** Sets an own data property: unlike `out[key] = …`, a key such as `__proto__` stays plain data. */
export function setOwn(out: object, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

function clone(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > 200) return null;
  if (Array.isArray(value)) return value.map((v) => clone(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    setOwn(out, k, clone((value as Record<string, unknown>)[k], depth + 1));
  }
  return out;
}

/** Appends a key to a path, quoting keys that are not plain names (`a.b`, `a["x y"]`). */
export function joinKey(prefix: string, key: string): string {
  const seg = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (seg.startsWith('[')) return `${prefix}${seg}`;
  return prefix ? `${prefix}.${seg}` : seg;
}

function apply(target: unknown, steps: RedactStep[], at: number, concrete: string, found: string[]): void {
  if (target === null || typeof target !== 'object') return;
  const step = steps[at];
  const last = at === steps.length - 1;
  if ('key' in step) {
    if (Array.isArray(target) || !Object.hasOwn(target, step.key)) return;
    const rec = target as Record<string, unknown>;
    const path = joinKey(concrete, step.key);
    if (last) {
      rec[step.key] = REDACTED;
      found.push(path);
    } else apply(rec[step.key], steps, at + 1, path, found);
    return;
  }
  if (!Array.isArray(target)) return;
  const indexes = 'each' in step ? target.map((_, i) => i) : step.index < target.length ? [step.index] : [];
  for (const i of indexes) {
    const path = `${concrete}[${i}]`;
    if (last) {
      target[i] = REDACTED;
      found.push(path);
    } else apply(target[i], steps, at + 1, path, found);
  }
}

/**
 * A copy of `args` with the values at `paths` "[redacted]", and the paths hit (`items[0].iban`).
 * Malformed paths are ignored (deployment rejects them); the input is never mutated.
 */
export function redactArguments(args: unknown, paths: readonly string[]) {
  const view = clone(args, 0);
  const redactedPaths: string[] = [];
  for (const p of Array.isArray(paths) ? paths : []) {
    const steps = parseRedactPath(p);
    if (!steps || steps.length === 0) continue;
    apply(view, steps, 0, '', redactedPaths);
  }
  return { view, redactedPaths: [...new Set(redactedPaths)] };
}
