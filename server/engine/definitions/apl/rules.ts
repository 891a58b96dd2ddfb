/**
 * Authority by the call (SPEC §14), as written on a ToolServer tool or a node's tool entry: the
 * `approval:` rules, `validate` and `input_schema`. Every error is reported, not the first.
 */
import { parseExpression } from '../../../shared/expression.js';
import { APL, type AplCode, describe, joinIndex, joinKey } from './errors.js';
import { has, isObj, type Obj, type Reader } from './fields.js';
import { readSchema } from './schema.js';
import type { ApprovalRule, ArgumentCheck, ToolPolicy } from '../../../shared/types.js';

/** Fields of a tool (or a node's entry) that this module reads. */
export const RULE_FIELDS = ['approval', 'validate', 'input_schema'];

/** What a tool or an entry wrote, before its policy is known. */
export interface WrittenChecks {
  rules: ApprovalRule[];
  /** where each rule was written, for errors found once the policy is known */
  rulePaths: string[];
  validate: ArgumentCheck[];
  inputSchema: Record<string, unknown> | null;
}

const RULE_HELP = '{ when: "<expression>", levels: [group, ...] | auto: true | deny: "<reason>" }';

/** Reads `approval`, `validate` and `input_schema` of one tool or node entry. */
export function readChecks(r: Reader, o: Obj, p: string, what: string): WrittenChecks {
  const out: WrittenChecks = { rules: [], rulePaths: [], validate: [], inputSchema: null };
  readRules(r, o, p, what, out);
  readValidate(r, o, p, what, out);
  out.inputSchema = readSchema(r, o, 'input_schema', p);
  return out;
}

/** A required expression field: its text when it parses, else null (reported). */
export function expression(r: Reader, o: Obj, key: string, p: string, what: string, help: string) {
  const text = r.str(o, key, p, what, { required: true, help });
  if (text === null) return null;
  const parsed = parseExpression(text);
  if (!parsed.ok) {
    return r.err(
      APL.EXPR_INVALID,
      joinKey(p, key),
      `The expression ${JSON.stringify(text.slice(0, 80))} does not parse: ${parsed.message} at character ${parsed.position + 1}.`,
    );
  }
  return text;
}

function readRules(r: Reader, o: Obj, p: string, what: string, out: WrittenChecks): void {
  if (!has(o, 'approval') || o.approval === null) return;
  const ap = joinKey(p, 'approval');
  if (!Array.isArray(o.approval)) {
    r.err(APL.DOC_FIELD, ap, `approval on ${what} must be a list of ${RULE_HELP}.`);
    return;
  }
  o.approval.forEach((rule, i) => {
    const rp = joinIndex(ap, i);
    if (!isObj(rule)) {
      r.err(APL.DOC_FIELD, rp, `Each approval rule must be ${RULE_HELP}, not ${describe(rule)}.`);
      return;
    }
    const what = 'an approval rule';
    r.keys(rule, rp, ['when', 'levels', 'auto', 'deny'], what);
    const when = expression(r, rule, 'when', rp, what, 'an expression such as "amount > 1000".');
    const outcomes = ['levels', 'auto', 'deny'].filter((k) => has(rule, k) && rule[k] !== null);
    if (outcomes.length !== 1) {
      r.err(
        APL.RULE_OUTCOME,
        rp,
        outcomes.length === 0
          ? 'An approval rule needs exactly one outcome: levels: [group, ...], auto: true or deny: "<reason>".'
          : `An approval rule has exactly one outcome; this one has ${outcomes.join(' and ')}. Split it into one rule per outcome.`,
      );
      return;
    }
    const parsed = readOutcome(r, rule, rp, outcomes[0] as 'levels' | 'auto' | 'deny');
    if (when !== null && parsed) {
      out.rules.push({ when, ...parsed });
      out.rulePaths.push(rp);
    }
  });
}

function readOutcome(r: Reader, rule: Obj, rp: string, outcome: 'levels' | 'auto' | 'deny') {
  if (outcome === 'auto') {
    if (rule.auto !== true) {
      return r.err(
        APL.RULE_OUTCOME,
        joinKey(rp, 'auto'),
        `auto must be true (the call runs without a person), not ${describe(rule.auto)}. Remove the rule to keep people deciding.`,
      );
    }
    return { levels: [], auto: true as const };
  }
  if (outcome === 'deny') {
    if (typeof rule.deny !== 'string' || rule.deny.trim() === '') {
      return r.err(
        APL.RULE_DENY_REASON,
        joinKey(rp, 'deny'),
        'deny needs a reason the model and the people reading the history understand, e.g. deny: "refunds above 5000 EUR go through the finance desk".',
      );
    }
    return { levels: [], deny: rule.deny.trim() };
  }
  const lp = joinKey(rp, 'levels');
  if (!Array.isArray(rule.levels) || rule.levels.length === 0) {
    r.err(APL.DOC_FIELD, lp, 'levels must be a non-empty list: each entry a group or a list of groups.');
    return null;
  }
  const levels = rule.levels.map((lv, j) => {
    const groups = r.strListValue(lv, joinIndex(lp, j), 'an approval level', { single: true });
    if (groups?.length === 0)
      r.err(APL.DOC_FIELD, joinIndex(lp, j), 'An approval level needs at least one group.');
    return groups?.length ? groups : null;
  });
  return levels.includes(null) ? null : { levels: levels as string[][] };
}

function readValidate(r: Reader, o: Obj, p: string, what: string, out: WrittenChecks): void {
  if (!has(o, 'validate') || o.validate === null) return;
  const vp = joinKey(p, 'validate');
  if (!Array.isArray(o.validate)) {
    r.err(
      APL.VALIDATE_INVALID,
      vp,
      `validate on ${what} must be a list of { expect: "<expression>", message: "<what is wrong>" }.`,
    );
    return;
  }
  o.validate.forEach((check, i) => {
    const cp = joinIndex(vp, i);
    if (!isObj(check)) {
      r.err(APL.VALIDATE_INVALID, cp, `Each validate entry is { expect, message }, not ${describe(check)}.`);
      return;
    }
    const what = 'a validate entry';
    r.keys(check, cp, ['expect', 'message'], what);
    const help = 'what the arguments must satisfy, e.g. "amount > 0".';
    const expect = expression(r, check, 'expect', cp, what, help);
    const message = r.str(check, 'message', cp, what, {
      required: true,
      help: 'what the model reads when the check fails, e.g. "the amount must be positive".',
    });
    if (expect !== null && message !== null) out.validate.push({ expect, message: message.trim() });
  });
}

/**
 * The tool's own checks against its policy: no rule, check or schema on a read (it runs before it is
 * journaled); only `deny` rules on a write (no person decides it); every outcome on approval_required.
 */
export function placeToolChecks(r: Reader, w: WrittenChecks, p: string, name: string, policy: ToolPolicy) {
  if (policy === 'approval_required') return w;
  if (policy === 'read') {
    rejectOnRead(r, w, p, name);
    return { rules: [], rulePaths: [], validate: [], inputSchema: null };
  }
  const why = (outcome: string) =>
    `${name} is a write: no person decides its calls, so its rules may only deny. Use policy: approval_required for ${outcome}, or make this rule a deny.`;
  return denyOnly(r, w, APL.RULE_NOT_APPROVAL, why);
}

/** Keeps the `deny` rules; reports each other rule with `message(its outcome)`. */
function denyOnly<T extends WrittenChecks>(
  r: Reader,
  w: T,
  code: AplCode,
  message: (outcome: string) => string,
): T {
  const kept = { ...w, rules: [] as ApprovalRule[], rulePaths: [] as string[] };
  w.rules.forEach((rule, i) => {
    if (rule.deny) {
      kept.rules.push(rule);
      kept.rulePaths.push(w.rulePaths[i]);
    } else r.err(code, w.rulePaths[i], message(rule.auto ? 'auto' : 'levels'));
  });
  return kept;
}

function rejectOnRead(r: Reader, w: WrittenChecks, p: string, name: string): void {
  if (w.rules.length)
    r.err(
      APL.RULE_NOT_APPROVAL,
      joinKey(p, 'approval'),
      `${name} is a read: it runs before it is journaled, so no rule can stop it. Remove the rules, or tighten its policy to write or approval_required.`,
    );
  if (w.validate.length || w.inputSchema)
    r.err(
      APL.VALIDATE_ON_READ,
      joinKey(p, w.validate.length ? 'validate' : 'input_schema'),
      `${name} is a read: its arguments are checked by the tool itself. validate and input_schema apply to write and approval_required tools.`,
    );
}

/** What a node's entry adds to its binding: `deny` rules, checks, a schema, and whether it drops `auto`. */
export interface EntryChecks extends WrittenChecks {
  dropAuto: boolean;
}

/**
 * A node entry's checks: only `deny` rules (a node may tighten, never loosen: `auto` and `levels` are
 * the tool's), `drop_auto` only where people decide.
 */
export function readEntryChecks(r: Reader, entry: Obj, ep: string): EntryChecks {
  const w = readChecks(r, entry, ep, 'a tool ref');
  const dropAuto = r.bool(entry, 'drop_auto', ep, 'a tool ref', false);
  const why = (outcome: string) =>
    `A node may add deny rules only: ${outcome} belong on the tool's own approval list. Use drop_auto: true to stop the tool's auto rules on this node.`;
  return { ...denyOnly(r, w, APL.RULE_NODE_LOOSENS, why), dropAuto };
}

/** A node entry's checks against the binding's effective policy (reported at the entry). */
export function placeEntryChecks(r: Reader, e: EntryChecks, ep: string, ref: string, policy: ToolPolicy) {
  if (policy === 'read') {
    rejectOnRead(r, e, ep, ref);
    if (e.dropAuto)
      r.err(
        APL.RULE_NOT_APPROVAL,
        joinKey(ep, 'drop_auto'),
        `${ref} is a read: it has no auto rules to drop. Remove drop_auto.`,
      );
    return { rules: [], rulePaths: [], validate: [], inputSchema: null, dropAuto: false };
  }
  if (e.dropAuto && policy !== 'approval_required') {
    r.err(
      APL.RULE_NOT_APPROVAL,
      joinKey(ep, 'drop_auto'),
      `${ref} is a write: no person decides its calls, so there is no auto rule to drop. Remove drop_auto.`,
    );
    return { ...e, dropAuto: false };
  }
  return e;
}
