/** APL error codes (each explained in docs/apl.md) and the collector placing each on a source line. */

export const APL = {
  YAML_SYNTAX: 'ABADA-APL-YAML-001',
  YAML_TOO_LARGE: 'ABADA-APL-YAML-002',
  DOC_KIND: 'ABADA-APL-DOC-001',
  DOC_FIELD: 'ABADA-APL-DOC-002',
  DOC_UNKNOWN_FIELD: 'ABADA-APL-DOC-003',
  DOC_DUPLICATE_PROCESS: 'ABADA-APL-DOC-004',
  DOC_DUPLICATE_SERVER: 'ABADA-APL-DOC-005',
  DOC_EMPTY: 'ABADA-APL-DOC-006',
  TOOL_UNKNOWN_SERVER: 'ABADA-APL-TOOL-001',
  TOOL_UNKNOWN_TOOL: 'ABADA-APL-TOOL-002',
  TOOL_NO_APPROVERS: 'ABADA-APL-TOOL-003',
  TOOL_LOOSENED: 'ABADA-APL-TOOL-004',
  TOOL_NOT_ALLOWED: 'ABADA-APL-TOOL-005',
  TOOL_DUPLICATE_REF: 'ABADA-APL-TOOL-006',
  TOOL_SCHEMA_PIN: 'ABADA-APL-TOOL-007',
  TOOL_BAD_REF: 'ABADA-APL-TOOL-008',
  TOOL_SETTING_LOOSENED: 'ABADA-APL-TOOL-009',
  GUARD_UNKNOWN_TOOL: 'ABADA-APL-GUARD-001',
  GUARD_NOT_READ: 'ABADA-APL-GUARD-002',
  GUARD_NOT_BOUND: 'ABADA-APL-GUARD-003',
  GUARD_NOT_WRITE: 'ABADA-APL-GUARD-004',
  GUARD_KEYLESS: 'ABADA-APL-GUARD-005',
  TEMPLATE_INVALID: 'ABADA-APL-TEMPLATE-001',
  MODEL_NOT_ALLOWED: 'ABADA-APL-MODEL-001',
  MODEL_NO_PRICE: 'ABADA-APL-MODEL-002',
  NODE_UNKNOWN_REF: 'ABADA-APL-NODE-001',
  NODE_DUPLICATE_ID: 'ABADA-APL-NODE-002',
  NODE_MISSING_NEXT: 'ABADA-APL-NODE-003',
  NODE_UNREACHABLE: 'ABADA-APL-NODE-004',
  SCHEMA_INVALID: 'ABADA-APL-SCHEMA-001',
  VAR_UNDECLARED: 'ABADA-APL-VAR-001',
  VAR_BAD_TYPE: 'ABADA-APL-VAR-002',
  VAR_UNKNOWN_OUTPUT: 'ABADA-APL-VAR-003',
  DELEGATE_UNKNOWN: 'ABADA-APL-DELEGATE-001',
  EXPR_INVALID: 'ABADA-APL-EXPR-001',
  LIMIT_INVALID: 'ABADA-APL-LIMIT-001',
  REDACT_INVALID: 'ABADA-APL-REDACT-001',
  RULE_OUTCOME: 'ABADA-APL-RULE-001',
  RULE_DENY_REASON: 'ABADA-APL-RULE-002',
  RULE_NOT_APPROVAL: 'ABADA-APL-RULE-003',
  RULE_NODE_LOOSENS: 'ABADA-APL-RULE-004',
  VALIDATE_INVALID: 'ABADA-APL-VALIDATE-001',
  VALIDATE_ON_READ: 'ABADA-APL-VALIDATE-002',
  INTERNAL: 'ABADA-APL-INTERNAL-001',
} as const;

export type AplCode = (typeof APL)[keyof typeof APL];

/** One deployment error: a code (ABADA-APL-…), where it is (path and 1-based line), what to do. */
export interface AplError {
  code: string;
  /** dotted path inside the document, e.g. `nodes[0].tools[2].ref`; prefixed by `documents[i].` */
  path: string;
  /** 1-based line in the submitted source, null when it cannot be located */
  line: number | null;
  column?: number | null;
  message: string;
}

const MAX_ERRORS = 100;

export interface Pos {
  line: number;
  column: number;
}

/** Removes the last segment of a relative path: `a.b[2]` → `a.b` → `a` → ``. */
function parentPath(path: string): string {
  const m = /(\.[^.[\]]+|\[[^\]]*\]|^[^.[\]]+)$/.exec(path);
  return m ? path.slice(0, path.length - m[0].length) : '';
}

export { joinKey } from '../../../shared/redact.js';

export function joinIndex(path: string, index: number): string {
  return `${path}[${index}]`;
}

/** Collects errors (at most MAX_ERRORS), placing each on the nearest located node. */
export class ErrorSink {
  readonly errors: AplError[] = [];
  /** per document, the position of each path the parser located */
  readonly positions = new Map<number, Map<string, Pos>>();

  /** The position of the path, or of its nearest located ancestor. */
  locate(docIndex: number, relPath: string): Pos | null {
    const positions = this.positions.get(docIndex);
    for (let p = relPath, i = 0; positions && i < 64; p = parentPath(p), i++) {
      const pos = positions.get(p);
      if (pos || p === '') return pos ?? null;
    }
    return null;
  }

  /** Adds an error on a document (relPath is relative to the document; docIndex -1 = the whole source). */
  add(code: AplCode, docIndex: number, relPath: string, message: string, at?: Pos | null): void {
    if (this.errors.length >= MAX_ERRORS) return;
    const docPath = docIndex >= 0 ? `documents[${docIndex}]` : 'documents';
    const path = !relPath || relPath.startsWith('[') ? `${docPath}${relPath}` : `${docPath}.${relPath}`;
    const pos = at ?? this.locate(docIndex, relPath);
    this.errors.push({ code, path, line: pos?.line ?? null, column: pos?.column ?? null, message });
  }

  /** Errors in source order (errors without a line last); the sort is stable. */
  sorted(): AplError[] {
    return [...this.errors].sort(
      (a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER),
    );
  }
}

/** Levenshtein distance, for "did you mean" hints (short strings only). */
function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Number.MAX_SAFE_INTEGER;
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** ` Did you mean "x"?` when a candidate is close, else ''. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  let best: string | null = null;
  let bestD = Number.MAX_SAFE_INTEGER;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  if (best !== null && bestD <= Math.max(2, Math.floor(word.length / 3))) return ` Did you mean "${best}"?`;
  return '';
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}
