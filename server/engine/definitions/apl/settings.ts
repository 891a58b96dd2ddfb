// biome-ignore-all lint/suspicious/noTemplateCurlyInString: messages quote ${…} templates literally
/**
 * The approval settings of SPEC §11 as written on a ToolServer tool or a node's tool entry. Which tools a
 * guard may name is checked once every server and binding is known (guards.ts).
 */
import { APL, joinIndex, joinKey } from './errors.js';
import { has, type Obj, type Reader, RESERVED } from './fields.js';
import { RISKS } from './policy.js';
import { expression } from './rules.js';
import { parseRedactPath } from '../../../shared/redact.js';
import { checkTemplate } from '../../../shared/template.js';
import type { ApprovalSettings } from '../../../shared/types.js';

export const SETTING_FIELDS = [
  ...['impact', 'reversible', 'risk', 'approval_valid_minutes', 'approval_timeout_hours', 'precondition'],
  ...['lookup', 'redact_result'],
];

export const TOOL_REF = /^([^/\s]+)\/([^/\s]+)$/;

/** The settings as written (absent = not written), and where a lookup first uses `${idempotencyKey}`. */
export interface WrittenSettings extends ApprovalSettings {
  /** path of the first `${idempotencyKey}` in the lookup's arguments */
  lookupKeyPath?: string;
}

type Use = 'impact' | 'precondition' | 'lookup';

export function readSettings(r: Reader, o: Obj, p: string, what: string): WrittenSettings {
  const s: WrittenSettings = {};
  const impact = r.str(o, 'impact', p, what);
  if (impact !== null && checkText(r, impact, joinKey(p, 'impact'), 'impact') !== false) s.impact = impact;
  // a malformed value is reported once (DOC-002) and not compared with the tool's
  const reversible = r.bool(o, 'reversible', p, what, true);
  if (typeof o.reversible === 'boolean') s.reversible = reversible;
  const risk = r.oneOf(o, 'risk', p, RISKS);
  if (risk) s.risk = risk;
  const valid = r.num(o, 'approval_valid_minutes', p, what, { integer: true, positive: true });
  if (valid !== null) s.approvalValidMinutes = valid;
  const timeout = r.num(o, 'approval_timeout_hours', p, what, { positive: true });
  if (timeout !== null) s.approvalTimeoutHours = timeout;
  const pre = readGuard(r, o, p, 'precondition', 'expect');
  if (pre) s.precondition = { tool: pre.tool, arguments: pre.arguments, expect: pre.expression };
  const look = readGuard(r, o, p, 'lookup', 'found');
  if (look) {
    s.lookup = { tool: look.tool, arguments: look.arguments, found: look.expression };
    if (look.keyPath) s.lookupKeyPath = look.keyPath;
  }
  const redact = r.strList(o, 'redact_result', p, what);
  if (redact) s.redactResult = redactPaths(r, redact, joinKey(p, 'redact_result'), 'paths in the answer');
  return s;
}

/** Keeps the well-formed redact paths, reporting the others (REDACT-001). */
export function redactPaths(r: Reader, paths: string[], lp: string, like: string): string[] {
  const out: string[] = [];
  paths.forEach((path, i) => {
    if (parseRedactPath(path)) out.push(path);
    else {
      r.err(
        APL.REDACT_INVALID,
        joinIndex(lp, i),
        `Redact path ${JSON.stringify(path)} is malformed: use ${like} like card.number or items[].iban.`,
      );
    }
  });
  return out;
}

/**
 * Checks the `${…}` of one text: false when it is malformed (reported), else the path of its first
 * `${idempotencyKey}` (refused outside a lookup) or null.
 */
function checkText(r: Reader, text: string, path: string, use: Use): string | null | false {
  const t = checkTemplate(text);
  if (!t.ok) {
    r.err(APL.TEMPLATE_INVALID, path, t.message);
    return false;
  }
  if (!t.refs.some((x) => x.kind === 'key')) return null;
  if (use !== 'lookup') {
    r.err(
      APL.TEMPLATE_INVALID,
      path,
      `\${idempotencyKey} is known only to a lookup (the key exists once the call starts). For an argument of that name write \${arguments.idempotencyKey}.`,
    );
    return false;
  }
  return path;
}

/** A guard's read: its tool, its arguments, its expression, and where its arguments use the key. */
function readGuard(r: Reader, o: Obj, p: string, field: Use, exprField: string) {
  if (!has(o, field) || o[field] === null) return null;
  const gp = joinKey(p, field);
  const what = `"${field}"`;
  const g = r.obj(o[field], gp, what);
  if (!g) return null;
  r.keys(g, gp, ['tool', 'arguments', exprField], what);
  const tool = r.str(g, 'tool', gp, what, {
    required: true,
    help: 'the read tool, server/tool (e.g. crm/get_order), bound on the same node.',
  });
  let toolOk = tool !== null;
  if (tool !== null && !TOOL_REF.test(tool.trim())) {
    r.err(
      APL.GUARD_UNKNOWN_TOOL,
      joinKey(gp, 'tool'),
      `${JSON.stringify(tool)} is not a tool ref: write server/tool, e.g. crm/get_order.`,
    );
    toolOk = false;
  }
  const args = readArguments(r, g, gp, field);
  const help =
    exprField === 'expect'
      ? "what the read's answer must satisfy, e.g. \"status == 'PAID' && amount >= arguments.amount\"."
      : 'when the write took effect, e.g. "len(refunds) > 0".';
  const expr = expression(r, g, exprField, gp, what, help);
  if (!toolOk || args === null || expr === null) return null;
  return { tool: (tool as string).trim(), arguments: args.value, expression: expr, keyPath: args.keyPath };
}

/** `arguments`: a mapping whose text leaves are templates; a copy, and the first key use. */
function readArguments(r: Reader, g: Obj, gp: string, use: Use) {
  if (!has(g, 'arguments') || g.arguments === null) return { value: {}, keyPath: null };
  const ap = joinKey(gp, 'arguments');
  const m = r.obj(g.arguments, ap, '"arguments"');
  if (!m) return null;
  const state = { ok: true, keyPath: null as string | null };
  const value = copyChecked(r, m, ap, use, state, 0) as Record<string, unknown>;
  return state.ok ? { value, keyPath: state.keyPath } : null;
}

function copyChecked(
  r: Reader,
  v: unknown,
  path: string,
  use: Use,
  state: { ok: boolean; keyPath: string | null },
  depth: number,
): unknown {
  if (typeof v === 'string') {
    const keyAt = checkText(r, v, path, use);
    if (keyAt === false) state.ok = false;
    else if (keyAt !== null) state.keyPath ??= keyAt;
    return v;
  }
  if (depth > 32 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x, i) => copyChecked(r, x, joinIndex(path, i), use, state, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (RESERVED.has(k)) {
      r.err(APL.DOC_FIELD, joinKey(path, k), `"${k}" cannot be an argument name. Rename it.`);
      state.ok = false;
      continue;
    }
    out[k] = copyChecked(r, x, joinKey(path, k), use, state, depth + 1);
  }
  return out;
}
