/** Typed field readers over a parsed YAML mapping, reporting DOC-002/DOC-003 errors with locations. */
import { APL, type AplCode, describe, didYouMean, type ErrorSink, joinIndex, joinKey } from './errors.js';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function has(o: Obj, key: string): boolean {
  return Object.hasOwn(o, key) && o[key] !== undefined;
}

/** Names unusable as a record key: empty, or prototype-related. */
export const RESERVED = new Set(['', '__proto__', 'constructor', 'prototype']);

export class Reader {
  constructor(
    readonly sink: ErrorSink,
    readonly doc: number,
  ) {}

  /** Reports an error; null, so that a reader can `return r.err(…)`. */
  err(code: AplCode, path: string, message: string): null {
    this.sink.add(code, this.doc, path, message);
    return null;
  }

  obj(value: unknown, path: string, what: string): Obj | null {
    if (isObj(value)) return value;
    return this.err(APL.DOC_FIELD, path, `${what} must be a mapping (key: value), not ${describe(value)}.`);
  }

  /** Reports every key outside `allowed` (DOC-003); `hint` explains where a misplaced key belongs. */
  keys(o: Obj, path: string, allowed: readonly string[], what: string, hint: Record<string, string> = {}) {
    for (const k of Object.keys(o)) {
      if (allowed.includes(k)) continue;
      const why = hint[k] ?? `Allowed fields: ${allowed.join(', ')}.${didYouMean(k, allowed)}`;
      this.err(APL.DOC_UNKNOWN_FIELD, joinKey(path, k), `Unknown field "${k}" on ${what}. ${why}`);
    }
  }

  missing(path: string, key: string, what: string, help: string): void {
    this.err(APL.DOC_FIELD, joinKey(path, key), `${what} needs "${key}": ${help}`);
  }

  str(
    o: Obj,
    key: string,
    path: string,
    what: string,
    opts: { required?: boolean; pattern?: RegExp; patternHelp?: string; help?: string } = {},
  ): string | null {
    const p = joinKey(path, key);
    if (!has(o, key) || o[key] === null) {
      if (opts.required) this.missing(path, key, what, opts.help ?? 'add it.');
      return null;
    }
    const v = o[key];
    if (typeof v !== 'string' || v.trim() === '') {
      return this.err(APL.DOC_FIELD, p, `"${key}" on ${what} must be non-empty text, not ${describe(v)}.`);
    }
    if (opts.pattern && !opts.pattern.test(v)) {
      return this.err(
        APL.DOC_FIELD,
        p,
        `"${key}" ${JSON.stringify(v)} on ${what} is malformed: ${opts.patternHelp ?? ''}`,
      );
    }
    return v;
  }

  /** One of `values`: undefined when absent, null (reported, DOC-002) when it is anything else. */
  oneOf<T extends string>(o: Obj, key: string, path: string, values: readonly T[], said?: string) {
    if (!has(o, key) || o[key] === null) return undefined;
    const v = o[key];
    if (values.includes(v as T)) return v as T;
    const list = said ?? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
    return this.err(APL.DOC_FIELD, joinKey(path, key), `${key} must be ${list}, not ${describe(v)}.`);
  }

  bool(o: Obj, key: string, path: string, what: string, dflt: boolean): boolean {
    if (!has(o, key) || o[key] === null) return dflt;
    const v = o[key];
    if (typeof v !== 'boolean') {
      this.err(
        APL.DOC_FIELD,
        joinKey(path, key),
        `"${key}" on ${what} must be true or false, not ${describe(v)}.`,
      );
      return dflt;
    }
    return v;
  }

  /** A number; `positive` reports LIMIT-001 when ≤ 0; `integer` requires a whole number. */
  num(
    o: Obj,
    key: string,
    path: string,
    what: string,
    opts: { integer?: boolean; positive?: boolean; min?: number; max?: number } = {},
  ): number | null {
    if (!has(o, key) || o[key] === null) return null;
    const v = o[key];
    const p = joinKey(path, key);
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      return this.err(APL.DOC_FIELD, p, `"${key}" on ${what} must be a number, not ${describe(v)}.`);
    }
    if (opts.integer && !Number.isInteger(v)) {
      return this.err(APL.DOC_FIELD, p, `"${key}" on ${what} must be a whole number, not ${v}.`);
    }
    if (opts.positive && v <= 0) {
      return this.err(APL.LIMIT_INVALID, p, `"${key}" on ${what} must be greater than 0, not ${v}.`);
    }
    if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) {
      return this.err(
        APL.LIMIT_INVALID,
        p,
        `"${key}" on ${what} must be between ${opts.min} and ${opts.max}, not ${v}.`,
      );
    }
    return v;
  }

  /** A list of non-empty strings; a single string is accepted as a one-element list when `single`. */
  strList(o: Obj, key: string, path: string, what: string, opts: { single?: boolean } = {}): string[] | null {
    if (!has(o, key) || o[key] === null) return null;
    return this.strListValue(o[key], joinKey(path, key), `"${key}" on ${what}`, opts);
  }

  strListValue(v: unknown, p: string, what: string, opts: { single?: boolean } = {}): string[] | null {
    if (opts.single && typeof v === 'string' && v.trim() !== '') return [v];
    if (!Array.isArray(v)) {
      return this.err(APL.DOC_FIELD, p, `${what} must be a list of names, e.g. [a, b], not ${describe(v)}.`);
    }
    let ok = true;
    v.forEach((item, i) => {
      if (typeof item === 'string' && item.trim() !== '') return;
      this.err(
        APL.DOC_FIELD,
        joinIndex(p, i),
        `Each entry of ${what} must be non-empty text, not ${describe(item)}.`,
      );
      ok = false;
    });
    return ok ? (v.slice() as string[]) : null;
  }

  /** A mapping of text values (env, inputs). */
  strMap(o: Obj, key: string, path: string, what: string): Record<string, string> {
    const out: Record<string, string> = {};
    if (!has(o, key) || o[key] === null) return out;
    const p = joinKey(path, key);
    const m = this.obj(o[key], p, `"${key}" on ${what}`);
    if (!m) return out;
    for (const [k, v] of Object.entries(m)) {
      if (RESERVED.has(k)) {
        this.err(APL.DOC_FIELD, joinKey(p, k), `"${k}" cannot be used as a name in "${key}". Rename it.`);
        continue;
      }
      if (typeof v !== 'string') {
        this.err(APL.DOC_FIELD, joinKey(p, k), `"${key}.${k}" must be text (quote it), not ${describe(v)}.`);
        continue;
      }
      out[k] = v;
    }
    return out;
  }
}
