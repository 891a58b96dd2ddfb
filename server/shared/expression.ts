/**
 * The expression language of `approval.when`: a hand-written tokenizer and recursive-descent parser to an
 * AST, and an evaluator over the tool call's arguments. No eval, no Function, no prototype access.
 *
 *   or      := and (('||' | 'or') and)*
 *   and     := not (('&&' | 'and') not)*
 *   not     := ('!' | 'not') not | compare
 *   compare := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum | 'not'? 'in' sum)?
 *   sum     := product (('+' | '-') product)*
 *   product := unary (('*' | '/') unary)*
 *   unary   := '-' unary | primary
 *   primary := number | string | true | false | null | '(' or ')' | '[' (or (',' or)*)? ']'
 *            | name '(' or ')'  (len, lower) | name ('.' name | '[' integer ']')*
 *
 * Semantics: a missing path is null; `<`, `<=`, `>`, `>=` hold only between two numbers or two strings
 * (so any comparison with null is false); `==` is strict equality of JSON values and `!=` its negation;
 * arithmetic on non-numbers (or division by zero) yields null; `&&`, `||`, `!` use JS truthiness and yield
 * booleans; `x in [..]` is membership by `==`. Evaluation is total over what the parser builds: nesting is
 * bounded (MAX_EXPRESSION_DEPTH, `equal`'s depth) and the arguments are read as data, never through their
 * getters, so nothing here throws short of a bug.
 */

/** The syntax tree the parser builds. */
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

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Evaluates an AST over the call's arguments. A bug throws rather than reading as false, which would skip
 * the rule whose `when` it is (a deny rule among them).
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
      if (e.op === '!') return !v;
      const n = num(v);
      return n === null ? null : -n;
    }
    case 'binary': {
      if (e.op === '&&') return !!evaluate(e.left, args) && !!evaluate(e.right, args);
      if (e.op === '||') return !!evaluate(e.left, args) || !!evaluate(e.right, args);
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
          const [a, b] = [l, r] as [number | string, number | string];
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

export const MAX_EXPRESSION_LENGTH = 1000;
export const MAX_EXPRESSION_DEPTH = 32;

export type ParseResult = { ok: true; ast: Expr } | { ok: false; message: string; position: number };

type Token =
  | { t: 'num'; v: number; p: number }
  | { t: 'str'; v: string; p: number }
  | { t: 'id'; v: string; p: number }
  | { t: 'op'; v: string; p: number }
  | { t: 'end'; p: number };

class ExprError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

/** Longest first, so that `<=` is not read as `<` then `=`. */
const OPERATORS = '== != <= >= && || < > ! + - * / ( ) [ ] , .'.split(' ');

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (/[0-9]/.test(c)) {
      const text = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i))?.[0] ?? c;
      const v = Number(text);
      if (!Number.isFinite(v)) throw new ExprError(`number ${text} is out of range`, i);
      out.push({ t: 'num', v, p: i });
      i += text.length;
      if (i < src.length && /[A-Za-z_]/.test(src[i])) throw new ExprError('a number runs into a name', i);
      continue;
    }
    if (c === '"' || c === "'") {
      // up to the same quote; a backslash takes the next character (\n and \t as newline and tab)
      const m = /^(["'])((?:\\[\s\S]|(?!\1)[^\\])*)\1/.exec(src.slice(i));
      if (!m) throw new ExprError('unterminated string', i);
      const v = m[2].replace(/\\([\s\S])/g, (_, e) => (e === 'n' ? '\n' : e === 't' ? '\t' : e));
      out.push({ t: 'str', v, p: i });
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const text = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))?.[0] ?? c;
      out.push({ t: 'id', v: text, p: i });
      i += text.length;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) throw new ExprError(`unexpected character ${JSON.stringify(c)}`, i);
    out.push({ t: 'op', v: op, p: i });
    i += op.length;
  }
  out.push({ t: 'end', p: src.length });
  return out;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'true', 'false', 'null']);
const FUNCTIONS = new Set(['len', 'lower']);

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i];
  }
  /** Whether the next token is the operator (or, with kind 'id', the word) `v`. */
  private is(v: string, kind: 'op' | 'id' = 'op'): boolean {
    const t = this.peek();
    return t.t === kind && t.v === v;
  }
  /** Consumes the operator `v` when it comes next. */
  private accept(v: string): boolean {
    if (!this.is(v)) return false;
    this.i++;
    return true;
  }
  private expectOp(v: string): void {
    if (!this.accept(v)) throw new ExprError(`expected "${v}"`, this.peek().p);
  }
  /** Reads one level deeper, refusing past MAX_EXPRESSION_DEPTH. */
  private nested<T>(read: () => T): T {
    if (++this.depth > MAX_EXPRESSION_DEPTH) {
      throw new ExprError(`expression nested more than ${MAX_EXPRESSION_DEPTH} levels deep`, this.peek().p);
    }
    const e = read();
    this.depth--;
    return e;
  }

  parse(): Expr {
    const e = this.or();
    const t = this.peek();
    if (t.t !== 'end') throw new ExprError(`unexpected ${describeToken(t)}`, t.p);
    return e;
  }

  /** `next (op next)*`, left-associative; `ops` maps each operator (a symbol or a word) to its AST op. */
  private chain(next: () => Expr, ops: Record<string, BinaryOp>): Expr {
    let left = next();
    for (let t = this.peek(); (t.t === 'op' || t.t === 'id') && Object.hasOwn(ops, t.v); t = this.peek()) {
      this.i++;
      left = { kind: 'binary', op: ops[t.v], left, right: next() };
    }
    return left;
  }

  private or(): Expr {
    return this.nested(() => this.chain(() => this.and(), { '||': '||', or: '||' }));
  }
  private and(): Expr {
    return this.chain(() => this.not(), { '&&': '&&', and: '&&' });
  }
  private not(): Expr {
    if (this.is('!') || this.is('not', 'id')) {
      this.i++;
      return { kind: 'unary', op: '!', operand: this.nested(() => this.not()) };
    }
    return this.compare();
  }
  private compare(): Expr {
    const left = this.sum();
    const t = this.peek();
    if (t.t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.v)) {
      this.i++;
      return { kind: 'binary', op: t.v as BinaryOp, left, right: this.sum() };
    }
    const next = this.tokens[this.i + 1];
    const notIn = this.is('not', 'id') && next.t === 'id' && next.v === 'in';
    if (!notIn && !this.is('in', 'id')) return left;
    this.i += notIn ? 2 : 1;
    return { kind: 'binary', op: notIn ? 'not in' : 'in', left, right: this.sum() };
  }
  private sum(): Expr {
    return this.chain(() => this.product(), { '+': '+', '-': '-' });
  }
  private product(): Expr {
    return this.chain(() => this.unary(), { '*': '*', '/': '/' });
  }
  private unary(): Expr {
    if (this.is('-')) {
      this.i++;
      return { kind: 'unary', op: '-', operand: this.nested(() => this.unary()) };
    }
    return this.primary();
  }
  private primary(): Expr {
    const t = this.peek();
    if (t.t === 'num' || t.t === 'str') {
      this.i++;
      return { kind: 'literal', value: t.v };
    }
    if (this.accept('(')) {
      const e = this.or();
      this.expectOp(')');
      return e;
    }
    if (this.accept('[')) {
      return this.nested(() => {
        const items: Expr[] = [];
        if (!this.is(']')) items.push(this.or());
        while (items.length > 0 && this.accept(',')) items.push(this.or());
        this.expectOp(']');
        return { kind: 'list', items };
      });
    }
    if (t.t === 'id') {
      if (t.v === 'true' || t.v === 'false' || t.v === 'null') {
        this.i++;
        return { kind: 'literal', value: t.v === 'null' ? null : t.v === 'true' };
      }
      if (KEYWORDS.has(t.v)) throw new ExprError(`unexpected "${t.v}"`, t.p);
      this.i++;
      if (this.is('(')) {
        if (!FUNCTIONS.has(t.v)) throw new ExprError(`unknown function "${t.v}" (use len or lower)`, t.p);
        this.i++;
        const arg = this.or();
        this.expectOp(')');
        return { kind: 'call', fn: t.v as 'len' | 'lower', arg };
      }
      const segments: (string | number)[] = [t.v];
      for (;;) {
        if (this.accept('.')) {
          const n = this.tokens[this.i++];
          if (n.t !== 'id') throw new ExprError('expected a name after "."', n.p);
          segments.push(n.v);
        } else if (this.accept('[')) {
          const n = this.tokens[this.i++];
          if ((n.t === 'num' && Number.isInteger(n.v)) || n.t === 'str') segments.push(n.v);
          else throw new ExprError('expected an index or a quoted key inside "[ ]"', n.p);
          this.expectOp(']');
        } else break;
      }
      return { kind: 'path', segments };
    }
    throw new ExprError(`unexpected ${describeToken(t)}`, t.p);
  }
}

function describeToken(t: Token): string {
  if (t.t === 'end') return 'end of expression';
  if (t.t === 'str') return 'string';
  return `"${String(t.v)}"`;
}

export function parseExpression(src: string): ParseResult {
  try {
    if (typeof src !== 'string') return { ok: false, message: 'the expression must be text', position: 0 };
    if (src.length > MAX_EXPRESSION_LENGTH) {
      return {
        ok: false,
        message: `the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`,
        position: MAX_EXPRESSION_LENGTH,
      };
    }
    if (src.trim() === '') return { ok: false, message: 'the expression is empty', position: 0 };
    return { ok: true, ast: new Parser(tokenize(src)).parse() };
  } catch (e) {
    // the tokenizer and the parser refuse with ExprError (nesting is bounded): anything else is a bug
    if (!(e instanceof ExprError)) throw e;
    return { ok: false, message: e.message, position: e.position };
  }
}

const cache = new Map<string, ParseResult>();

/** True when the rule's `when` parses and evaluates to boolean true over `args`. */
export function matchesRule(when: string, args: unknown): boolean {
  let parsed = cache.get(when);
  if (!parsed) {
    parsed = parseExpression(when);
    if (cache.size > 1000) cache.clear();
    cache.set(when, parsed);
  }
  return parsed.ok ? evaluate(parsed.ast, args) === true : false;
}
