/**
 * What the rules say of one call (SPEC §14): whether its arguments are valid (`input_schema`, then
 * `validate`, in order), and which rule decides it: a matching `deny`; else the matching `levels` rule
 * with most levels (the first of equals); else a matching `auto` (unless the node dropped them or a person
 * edited the call); else the tool's approvers. Pure: asked at PROPOSED, at STARTED and on an edit.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { canonicalJson } from '../../shared/canonical.js';
import { matchesRule, type ApprovalRule, type ToolBinding } from '../definitions/index.js';

/** A rule as the API and the history name it: its place in the binding's merged list, and its outcome. */
export interface RuleRef {
  index: number;
  when: string;
  levels: string[][];
  auto: boolean;
  deny: string | null;
}

export type RuleOutcome =
  | { kind: 'deny'; rule: RuleRef }
  | { kind: 'auto'; rule: RuleRef }
  | { kind: 'levels'; levels: string[][]; rule: RuleRef | null };

function refOf(rule: ApprovalRule, index: number): RuleRef {
  return {
    index,
    when: rule.when,
    levels: rule.levels.map((l) => [...l]),
    auto: rule.auto === true,
    deny: rule.deny ?? null,
  };
}

export function ruleFor(binding: ToolBinding, args: Record<string, unknown>): RuleOutcome {
  const rules = binding.approvalRules ?? [];
  let levels: { rule: ApprovalRule; index: number } | null = null;
  let auto: { rule: ApprovalRule; index: number } | null = null;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    if (!matchesRule(rule.when, args)) continue;
    if (rule.deny) return { kind: 'deny', rule: refOf(rule, i) };
    if (rule.auto) auto ??= { rule, index: i };
    else if (rule.levels.length > 0 && (!levels || rule.levels.length > levels.rule.levels.length))
      levels = { rule, index: i };
  }
  if (levels) return { kind: 'levels', levels: levels.rule.levels, rule: refOf(levels.rule, levels.index) };
  if (auto && !binding.dropAuto && binding.policy === 'approval_required')
    return { kind: 'auto', rule: refOf(auto.rule, auto.index) };
  return { kind: 'levels', levels: [binding.approvers], rule: null };
}

/** The rule stored on an approval (by its index) as the API shows it; null: the tool's approvers. */
export function ruleAt(binding: ToolBinding | undefined, index: number | null): RuleRef | null {
  const rule = index === null ? undefined : binding?.approvalRules?.[index];
  return rule ? refOf(rule, index!) : null;
}

/** One failed check, as history keeps it: which check, never the values. */
export interface ArgumentFailure {
  /** `input_schema` or `validate[i]` */
  check: string;
  /** what the model (or the approver) reads */
  message: string;
  /** for a schema failure: where in the arguments and which keyword */
  path?: string;
  keyword?: string;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = canonicalJson(schema);
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile(schema);
    if (validators.size > 500) validators.clear();
    validators.set(key, v);
  }
  return v;
}

function schemaMessage(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'the arguments';
  return `${where} ${e.message ?? 'does not match input_schema'}`;
}

/** The checks of SPEC §14.2 over a call's arguments, in order (schema, then `validate`); empty: passed. */
export function argumentFailures(binding: ToolBinding, args: Record<string, unknown>): ArgumentFailure[] {
  const out: ArgumentFailure[] = [];
  if (binding.inputSchema) {
    const validate = validatorFor(binding.inputSchema);
    if (!validate(args))
      for (const e of validate.errors ?? [])
        out.push({
          check: 'input_schema',
          message: schemaMessage(e),
          path: e.instancePath,
          keyword: e.keyword,
        });
  }
  (binding.validate ?? []).forEach((c, i) => {
    if (!matchesRule(c.expect, args)) out.push({ check: `validate[${i}]`, message: c.message });
  });
  return out;
}

export function failureRecord(f: ArgumentFailure): Record<string, unknown> {
  return f.check === 'input_schema'
    ? { check: f.check, path: f.path, keyword: f.keyword }
    : { check: f.check };
}

export function ruleRecord(rule: RuleRef | null): Record<string, unknown> | null {
  if (!rule) return null;
  return {
    index: rule.index,
    when: rule.when,
    ...(rule.deny ? { deny: rule.deny } : rule.auto ? { auto: true } : { levels: rule.levels }),
  };
}
