// biome-ignore-all lint/suspicious/noTemplateCurlyInString: APL templates use ${name} literally
/**
 * Templates over a tool call's arguments (SPEC §11): `impact` and a guard's arguments. `${x}`, `${order.id}`,
 * `${items[0].sku}` (or `${arguments.…}`) name arguments; `${idempotencyKey}` the call's key, in a lookup
 * only. A text that is exactly one `${…}` renders to the value itself (a number stays a number); otherwise
 * values are interpolated as text (objects as JSON, a missing value as empty text).
 */

import { setOwn } from './redact.js';

const SEGMENTS = /^[A-Za-z_][A-Za-z0-9_]*((\.[A-Za-z_][A-Za-z0-9_]*)|(\[\d+\]))*$/;
const PLACEHOLDER = /\$\{([^}]*)\}?/g;
const WHOLE = /^\$\{([^}]*)\}$/;

export const IDEMPOTENCY_KEY = 'idempotencyKey';

/** One `${…}`: the call argument path it names, or the idempotency key. */
export type TemplateRef = { kind: 'argument'; path: (string | number)[] } | { kind: 'key' };

export type TemplateCheck = { ok: true; refs: TemplateRef[] } | { ok: false; message: string };

function toPath(text: string): (string | number)[] {
  return [...text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/g)].map((m) => m[1] ?? Number(m[2]));
}

/** Parses one placeholder's inside; a message when it names neither an argument nor the key. */
export function parsePlaceholder(inner: string): TemplateRef | string {
  const t = inner.trim();
  if (t === IDEMPOTENCY_KEY) return { kind: 'key' };
  const body = t.startsWith('arguments.') ? t.slice('arguments.'.length) : t;
  if (t === 'arguments' || !SEGMENTS.test(body)) {
    return `\${${t.slice(0, 40)}} names no call argument: write \${name}, \${arguments.name} or a path such as \${order.id}.`;
  }
  return { kind: 'argument', path: toPath(body) };
}

/** Every placeholder of `text`, or the first problem (an unclosed `${`, a malformed reference). */
export function checkTemplate(text: string): TemplateCheck {
  const refs: TemplateRef[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (!m[0].endsWith('}')) return { ok: false, message: '"${" is not closed: write ${name}.' };
    const ref = parsePlaceholder(m[1]);
    if (typeof ref === 'string') return { ok: false, message: ref };
    refs.push(ref);
  }
  return { ok: true, refs };
}

function lookupPath(args: unknown, path: (string | number)[]): unknown {
  let v: unknown = args;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    if (typeof seg === 'number' ? !Array.isArray(v) : Array.isArray(v)) return undefined;
    if (!Object.hasOwn(v, seg)) return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

function placeholderValue(inner: string, args: Record<string, unknown>, key: string | null): unknown {
  const ref = parsePlaceholder(inner);
  if (typeof ref === 'string') return undefined;
  return ref.kind === 'key' ? (key ?? undefined) : lookupPath(args, ref.path);
}

/** Renders a template over the call's arguments (and its idempotency key, when it has one). */
export function renderTemplate(text: string, args: Record<string, unknown>, key: string | null = null) {
  const whole = WHOLE.exec(text);
  if (whole) return placeholderValue(whole[1], args, key) ?? null;
  return text.replace(PLACEHOLDER, (m, inner: string) => {
    if (!m.endsWith('}')) return m;
    const v = placeholderValue(inner, args, key);
    if (v === undefined || v === null) return '';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
}

/** Renders every text leaf of a precondition's or lookup's `arguments`. */
export function renderArguments(
  template: unknown,
  args: Record<string, unknown>,
  key: string | null = null,
  depth = 0,
): unknown {
  if (depth > 64) return null;
  if (typeof template === 'string') return renderTemplate(template, args, key);
  if (Array.isArray(template)) return template.map((t) => renderArguments(t, args, key, depth + 1));
  if (template === null || typeof template !== 'object') return template;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(template)) {
    setOwn(out, k, renderArguments(v, args, key, depth + 1));
  }
  return out;
}
