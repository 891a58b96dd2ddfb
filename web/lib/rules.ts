/**
 * An approval rule said for people, the same way wherever it appears: on the approval (from
 * `Approval.rule`) and in the trace (from the rule a history row keeps, whose levels are plain group
 * lists). Rules are numbered from 1 on screen; the engine's `index` counts from 0 over the tool's rules,
 * then the node's.
 */

export interface RuleLike {
  index: number;
  when: string;
  auto?: boolean | null;
  deny?: string | null;
  /** `[{ groups }]` from GraphQL, `[[groups]]` from a history row */
  levels?: readonly ({ readonly groups: readonly string[] } | readonly string[])[] | null;
}

const groupsOf = (level: { readonly groups: readonly string[] } | readonly string[]): readonly string[] =>
  'groups' in level ? level.groups : level;

/** "rule 2" */
export const ruleName = (r: RuleLike) => `rule ${r.index + 1}`;

/** The levels in turn: "finance, then finance-leads" (a level of several groups: "finance or audit"). */
export function levelsText(r: RuleLike): string {
  return (r.levels ?? []).map((l) => groupsOf(l).join(' or ')).join(', then ');
}

/** What the rule does: "finance, then finance-leads", "runs without a person", "refused: <reason>". */
export function ruleOutcome(r: RuleLike): string {
  if (r.deny) return `refused: ${r.deny}`;
  if (r.auto) return 'runs without a person (auto)';
  return levelsText(r);
}

/** "Rule 2: amount > 1000 → finance, then finance-leads" */
export function ruleLine(r: RuleLike): string {
  return `Rule ${r.index + 1}: ${r.when} → ${ruleOutcome(r)}`;
}

/** A rule kept in a history row's data, when it has one. */
export function ruleOfData(data: unknown): RuleLike | null {
  const r = (data as { rule?: unknown } | null)?.rule as RuleLike | null | undefined;
  return r && typeof r.index === 'number' && typeof r.when === 'string' ? r : null;
}
