/** The syntax tree of an APL expression, shared by the parser and the evaluator. */
export type Expr =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'path'; segments: (string | number)[] }
  | { kind: 'list'; items: Expr[] }
  | { kind: 'unary'; op: '!' | '-'; operand: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'call'; fn: 'len' | 'lower'; arg: Expr };

export type BinaryOp =
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '&&'
  | '||'
  | '+'
  | '-'
  | '*'
  | '/'
  | 'in'
  | 'not in';
