/**
 * Abuse limits checked at validation, before any resolver runs: query depth, number of aliases and
 * fields, and fragment spreads (fragment bombs expand through spreads, so spreads count toward depth).
 */
import {
  GraphQLError,
  Kind,
  type ASTNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

const limits = { maxDepth: 12, maxAliases: 30, maxFields: 1500 };

function limitsRule(context: ValidationContext) {
  const doc = context.getDocument();
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  let fields = 0;
  let aliases = 0;
  let reported = false;
  const report = (message: string, node: ASTNode) => {
    if (reported) return;
    reported = true;
    context.reportError(
      new GraphQLError(message, { nodes: [node], extensions: { code: 'VALIDATION_FAILED' } }),
    );
  };
  const walk = (set: SelectionSetNode, depth: number, seen: Set<string>) => {
    if (reported) return;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        fields++;
        if (sel.alias) aliases++;
        if (fields > limits.maxFields)
          return report(`The query selects more than ${limits.maxFields} fields; ask for less.`, sel);
        if (aliases > limits.maxAliases)
          return report(
            `The query uses more than ${limits.maxAliases} aliases; batch fewer operations.`,
            sel,
          );
        if (sel.selectionSet) {
          if (depth + 1 > limits.maxDepth)
            return report(`The query is nested deeper than ${limits.maxDepth} levels.`, sel);
          walk(sel.selectionSet, depth + 1, seen);
        }
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet, depth, seen);
      } else {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag || seen.has(name)) continue;
        walk(frag.selectionSet, depth, new Set([...seen, name]));
      }
    }
  };
  for (const d of doc.definitions)
    if (d.kind === Kind.OPERATION_DEFINITION) walk(d.selectionSet, 0, new Set());
  return {};
}

export const limitsPlugin: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(limitsRule),
};
