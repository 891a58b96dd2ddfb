/**
 * The guards of a call (SPEC §11: `precondition`, `lookup`); an expression sees the read's answer as bare
 * names, the call's arguments as `arguments.*`. Pure, so the engine checks what the worker journaled with
 * the very functions the worker decided with.
 */
import { type Expr, evaluate, parseExpression } from './expression.js';
import { renderArguments } from './template.js';

/** What the model reads when a precondition no longer holds at the start of the call (SPEC §11). */
export const FACTS_CHANGED_PREFIX = 'Not executed: the facts changed since approval: ';

export function factsChangedReason(explanation: string): string {
  return `${FACTS_CHANGED_PREFIX}${explanation}.`;
}

/** A guard as a binding freezes it (`expect` for a precondition, `found` for a lookup). */
export interface Guard {
  tool: string;
  arguments: unknown;
  expression: string;
}

/** The read's arguments for this call (the lookup's may name the idempotency key). */
export function guardArguments(
  guard: Pick<Guard, 'arguments'>,
  callArgs: Record<string, unknown>,
  key: string | null = null,
): Record<string, unknown> {
  const rendered = renderArguments(guard.arguments ?? {}, callArgs, key);
  return rendered && typeof rendered === 'object' && !Array.isArray(rendered)
    ? (rendered as Record<string, unknown>)
    : {};
}

/**
 * A read's answer as the expression sees it: its structured content (what the worker journals when the
 * tool gives one), else its text parsed as JSON; anything else is an empty answer.
 */
export function answerOf(response: unknown): Record<string, unknown> {
  let v = response;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      return {};
    }
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Whether a guard holds over a read's answer and the call's arguments, and why (the values it read). */
export function checkGuard(expression: string, response: unknown, callArgs: Record<string, unknown>) {
  const parsed = parseExpression(expression);
  if (!parsed.ok) return { holds: false, explanation: `${expression} (does not parse: ${parsed.message})` };
  const scope = { ...answerOf(response), arguments: callArgs };
  const holds = evaluate(parsed.ast, scope) === true;
  const values = [...new Set(pathsOf(parsed.ast))].map((p) => `${p} = ${show(valueAt(scope, p))}`);
  return { holds, explanation: values.length ? `${expression} (${values.join(', ')})` : expression };
}

/** The paths an expression reads, in the order written. */
function pathsOf(e: Expr): string[] {
  switch (e.kind) {
    case 'path':
      return [e.segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('')];
    case 'literal':
      return [];
    case 'list':
      return e.items.flatMap(pathsOf);
    case 'unary':
      return pathsOf(e.operand);
    case 'binary':
      return [...pathsOf(e.left), ...pathsOf(e.right)];
    case 'call':
      return pathsOf(e.arg);
  }
}

function valueAt(scope: unknown, path: string): unknown {
  const parsed = parseExpression(path);
  return parsed.ok ? evaluate(parsed.ast, scope) : null;
}

function show(v: unknown): string {
  const text = JSON.stringify(v ?? null) ?? 'null';
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}
