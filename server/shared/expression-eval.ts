/**
 * Evaluation of parsed `approval.when` expressions (semantics in expression.ts). Total over what the
 * parser builds: a missing path or a type mismatch yields null or false, nesting is bounded
 * (MAX_EXPRESSION_DEPTH, `equal`'s depth), and the arguments are read as data, never through their
 * getters, so nothing here throws short of a bug.
 */

/** The syntax tree of an APL expression, built by the parser in expression.ts. */
export type Expr =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'path'; segments: (string | number)[] }
  | { kind: 'list'; items: Expr[] }
  | { kind: 'unary'; op: '!' | '-'; operand: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'call'; fn: 'len' | 'lower'; arg: Expr };

type Comparison = '==' | '!=' | '<' | '<=' | '>' | '>=';
export type BinaryOp = Comparison | '&&' | '||' | '+' | '-' | '*' | '/' | 'in' | 'not in';

/** An own data property's value; an accessor reads as missing (a getter is code, and may throw). */
function dataAt(o: object, key: string | number): unknown {
  const d = Object.getOwnPropertyDescriptor(o, key);
  return d && 'value' in d ? d.value : undefined;
}

function lookup(args: unknown, segments: (string | number)[]): unknown {
  let cur: unknown = args;
  for (const seg of segments) {
    if (cur === null || typeof cur !== 'object') return null;
    if (Array.isArray(cur)) {
      if (typeof seg !== 'number' || seg < 0 || seg >= cur.length) return null;
      cur = dataAt(cur, seg);
    } else cur = dataAt(cur, String(seg));
    if (cur === undefined) return null;
  }
  return cur ?? null;
}

function equal(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > 32 || a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && equal(dataAt(a, k), dataAt(b, k), depth + 1));
}

function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (typeof v === 'number' && Number.isNaN(v)) return false;
  return true;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Evaluates an AST over the call's arguments. A bug here throws rather than reading as false: false
 * would skip the approval rule whose `when` it is (a deny rule among them), as if the call did not match.
 */
export function evaluate(e: Expr, args: unknown): unknown {
  switch (e.kind) {
    case 'literal':
      return e.value;
    case 'path':
      return lookup(args, e.segments);
    case 'list':
      return e.items.map((x) => evaluate(x, args));
    case 'call': {
      const v = evaluate(e.arg, args);
      if (e.fn === 'lower') return typeof v === 'string' ? v.toLowerCase() : null;
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (v !== null && typeof v === 'object') return Object.keys(v).length;
      return null;
    }
    case 'unary': {
      const v = evaluate(e.operand, args);
      if (e.op === '!') return !truthy(v);
      const n = num(v);
      return n === null ? null : -n;
    }
    case 'binary': {
      if (e.op === '&&') return truthy(evaluate(e.left, args)) && truthy(evaluate(e.right, args));
      if (e.op === '||') return truthy(evaluate(e.left, args)) || truthy(evaluate(e.right, args));
      const l = evaluate(e.left, args);
      const r = evaluate(e.right, args);
      switch (e.op) {
        case '==':
          return equal(l, r);
        case '!=':
          return !equal(l, r);
        case '<':
        case '<=':
        case '>':
        case '>=': {
          const comparable =
            (typeof l === 'number' && typeof r === 'number') ||
            (typeof l === 'string' && typeof r === 'string');
          if (!comparable) return false;
          const a = l as number | string;
          const b = r as number | string;
          return e.op === '<' ? a < b : e.op === '<=' ? a <= b : e.op === '>' ? a > b : a >= b;
        }
        case 'in':
        case 'not in':
          // both are false when the right side is not a list
          return Array.isArray(r) && r.some((x) => equal(l, x)) === (e.op === 'in');
        case '+':
        case '-':
        case '*':
        case '/': {
          if (e.op === '+' && typeof l === 'string' && typeof r === 'string') return l + r;
          const a = num(l);
          const b = num(r);
          if (a === null || b === null || (e.op === '/' && b === 0)) return null;
          const n = e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : a / b;
          return Number.isFinite(n) ? n : null;
        }
      }
    }
  }
  return null;
}
