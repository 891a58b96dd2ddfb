/**
 * The approval settings of SPEC §11 with defaults: a deployment freezes every one (`withDefaults`); readers
 * go through `bindingPolicy`, so bindings frozen without them keep their behaviour: no validity window,
 * no timeout, no guards, and the descriptive defaults (reversible, medium risk).
 */
import type { ApprovalSettings, Risk } from '../../../shared/types.js';

export const RISKS: readonly Risk[] = ['low', 'medium', 'high'];
export const RISK_RANK: Record<Risk, number> = { low: 0, medium: 1, high: 2 };

/** The settings a new deployment freezes (from a tool written now, or a tool spec stored before). */
export function withDefaults(s: ApprovalSettings) {
  return {
    ...bindingPolicy(s),
    approvalValidMinutes: s.approvalValidMinutes ?? 1440,
  };
}

/** The effective settings of a frozen binding, every one present. */
export function bindingPolicy(b: ApprovalSettings) {
  return {
    impact: b.impact ?? null,
    reversible: b.reversible ?? true,
    risk: b.risk ?? 'medium',
    approvalValidMinutes: b.approvalValidMinutes ?? null,
    approvalTimeoutHours: b.approvalTimeoutHours ?? null,
    precondition: b.precondition ?? null,
    lookup: b.lookup ?? null,
    redactResult: b.redactResult ?? [],
  };
}

/** The node's evidence redaction of its inputs (absent on older definitions). */
export function nodeRedactInputs(node: { redactInputs?: string[] }): string[] {
  return node.redactInputs ?? [];
}
