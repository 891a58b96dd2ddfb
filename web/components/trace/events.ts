/**
 * History rows and refused calls said for people. The rules over a call's arguments act without a person:
 * an `auto` rule approves, a `deny` rule or failed validation rejects before anyone is asked. The trace
 * names the rule that acted, from the history row the engine wrote for it, so a reader never takes the
 * policy's refusal for a person's.
 */
import { ruleName, ruleOfData } from '../../lib/rules';
import { stepKey, type TraceEvent } from './types';

interface Data {
  version?: number;
  level?: number | null;
  of?: number;
  code?: string;
  action?: string;
  decision?: string;
  failures?: { check?: string; path?: string }[];
  failed?: string;
  editedFrom?: { version: number };
  suppressed?: number;
}

/** "human:fiona#<id>" → "fiona"; "engine" and "policy" stay as they are. */
export const actorName = (actor: string) => actor.replace(/^[a-z]+:/, '').replace(/#.*$/, '');

/** "validate[0]" → "validate check 1"; "input_schema" at a path → "input_schema at /amount". */
function checkText(f: { check?: string; path?: string }): string {
  const m = /^validate\[(\d+)\]$/.exec(f.check ?? '');
  const check = m ? `validate check ${Number(m[1]) + 1}` : (f.check ?? 'a check');
  return f.path ? `${check} at ${f.path}` : check;
}

const words = (s: string) => s.replace(/_/g, ' ').toLowerCase();
const levelOf = (d: Data) => (d.level != null ? `level ${d.level}${d.of ? ` of ${d.of}` : ''}` : 'no level');

/** One history row as a short phrase: "auto-approved by the policy · rule 1: amount <= 20". */
export function eventText(e: TraceEvent): string {
  const d = (e.data ?? {}) as Data;
  const rule = ruleOfData(e.data);
  const named = rule ? ` · ${ruleName(rule)}: ${rule.when}` : '';
  switch (e.eventType) {
    case 'APPROVAL_AUTO':
      return `auto-approved${named}${d.version ? ` (version ${d.version})` : ''}`;
    case 'POLICY_DENIED':
      return `refused by policy${named}`;
    case 'ARGUMENTS_INVALID': {
      const checks = [...new Set((d.failures ?? []).map(checkText))];
      return `invalid arguments${checks.length ? ` · failed ${checks.join(', ')}` : ''}`;
    }
    case 'NOT_PROPOSED':
      return `not proposed: the precondition already fails${d.failed ? ` (${d.failed})` : ''}`;
    case 'APPROVAL_EDITED':
      return `approved with changes: version ${d.version ?? '?'} made, counting for no level`;
    case 'APPROVAL_LEVEL_APPROVED':
      return `approval ${levelOf(d)} approved${d.editedFrom ? ' with changes' : ''}${d.version ? ` (version ${d.version})` : ''}`;
    case 'APPROVAL_APPROVED':
    case 'APPROVAL_REJECTED':
      return `${words(e.eventType)}${d.editedFrom ? ' with changes' : ''}${d.version ? ` (version ${d.version}, ${levelOf(d)})` : ''}`;
    case 'APPROVAL_DECISION_REFUSED': {
      const what = d.action === 'REVOKE' ? 'revoke' : (d.decision ?? 'decision').toLowerCase();
      const more = d.suppressed ? `; ${d.suppressed} more like it before` : '';
      return `${what} refused: ${words(d.code ?? 'unknown')} (version ${d.version ?? '?'}, ${levelOf(d)})${more}`;
    }
    default:
      return words(e.eventType);
  }
}

/** Rows that say a refusal or an attempt refused, drawn in the refusal colour. */
export const REFUSAL_EVENTS = new Set(['POLICY_DENIED', 'ARGUMENTS_INVALID', 'NOT_PROPOSED', 'APPROVAL_DECISION_REFUSED']);

export interface PolicyMark {
  kind: 'auto' | 'denied' | 'invalid' | 'not-proposed';
  /** "auto-approved · rule 1: amount <= 20" */
  label: string;
}

const PREFIXES: [string, PolicyMark['kind'], string][] = [
  ['Refused by policy:', 'denied', 'refused by policy'],
  ['Invalid arguments:', 'invalid', 'invalid arguments'],
  ['Not proposed:', 'not-proposed', 'not proposed'],
];

/**
 * Whether the policy, not a person, answered this step: approved by an `auto` rule (its APPROVAL_AUTO
 * row), or REJECTED by the engine before anyone was asked (its comment's prefix, the rule from its row).
 */
export function policyMark(
  step: { state: string; comment: string | null },
  key: string,
  history: readonly TraceEvent[],
): PolicyMark | null {
  const at = history.filter((e) => e.taskId && stepKey(e.taskId, e.attempt, e.sequence) === key);
  const rowOf = (type: string) => at.filter((e) => e.eventType === type).at(-1);
  if (step.state === 'REJECTED' && step.comment) {
    const hit = PREFIXES.find(([prefix]) => step.comment?.startsWith(prefix));
    if (!hit) return null;
    const rule = hit[1] === 'denied' ? ruleOfData(rowOf('POLICY_DENIED')?.data) : null;
    return { kind: hit[1], label: rule ? `${hit[2]} · ${ruleName(rule)}: ${rule.when}` : hit[2] };
  }
  const auto = rowOf('APPROVAL_AUTO');
  if (!auto || !['APPROVED', 'STARTED', 'COMPLETED', 'FAILED', 'OUTCOME_UNKNOWN'].includes(step.state)) return null;
  const rule = ruleOfData(auto.data);
  return { kind: 'auto', label: rule ? `auto-approved · ${ruleName(rule)}: ${rule.when}` : 'auto-approved by the policy' };
}
