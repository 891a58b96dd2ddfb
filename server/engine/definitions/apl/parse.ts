/** YAML → plain values, with every key's and list item's 1-based line and column for errors to point at. */
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
} from 'yaml';
import { setOwn } from '../../../shared/redact.js';
import { APL, type ErrorSink, joinIndex, joinKey, type Pos } from './errors.js';

const MAX_SOURCE_BYTES = 1024 * 1024;
/** Nesting (flow brackets, or indentation columns) beyond which the YAML parser is not even called. */
const MAX_FLOW_DEPTH = 64;
const MAX_INDENT = 200;
const TOO_INDENTED = `A line is indented more than ${MAX_INDENT} columns. Flatten the document.`;
const TOO_NESTED = `Flow collections are nested more than ${MAX_FLOW_DEPTH} levels deep. Flatten the document.`;
const MAX_VALUE_DEPTH = 100;
const MAX_NODES = 200_000;
const MAX_ALIASES = 100;

interface ParsedDocument {
  index: number;
  value: unknown;
  /** the document has YAML errors: its value is not used */
  broken: boolean;
  /** for a broken document, its `kind` and `name`/`key` when still readable (to avoid cascading errors) */
  salvage?: { kind: string; name: string } | null;
}

/** Reads the top map's scalar pairs through yaml's type guards: a broken document cannot make it throw. */
function salvage(doc: Document): { kind: string; name: string } | null {
  const c = doc.contents;
  if (!isMap(c)) return null;
  let kind: string | null = null;
  let name: string | null = null;
  for (const pair of c.items) {
    if (!isPair(pair) || !isScalar(pair.key) || !isScalar(pair.value)) continue;
    const k = pair.key.value;
    const v = pair.value.value;
    if (typeof v !== 'string') continue;
    if (k === 'kind') kind = v;
    else if (k === 'name' || k === 'key') name = v;
  }
  return kind && name ? { kind, name } : null;
}

/**
 * Cheap pre-scan for nesting that could exhaust the stack inside the YAML parser (which would be caught,
 * except that V8 can abort the process when it compiles a regular expression near the stack limit).
 */
function scanNesting(source: string): (Pos & { message: string }) | null {
  let depth = 0;
  let line = 1;
  let i = 0;
  const n = source.length;
  let blockScalarIndent = -1;
  while (i < n) {
    // at a line start
    let indent = 0;
    while (i < n && source[i] === ' ') {
      indent++;
      i++;
    }
    const blank = i >= n || source[i] === '\n' || source[i] === '\r' || source[i] === '#';
    if (blockScalarIndent >= 0 && (blank || indent > blockScalarIndent)) {
      while (i < n && source[i] !== '\n') i++;
      i++;
      line++;
      continue;
    }
    blockScalarIndent = -1;
    if (indent > MAX_INDENT && !blank && depth === 0)
      return { line, column: indent + 1, message: TOO_INDENTED };
    let valueStart = true;
    while (i < n && source[i] !== '\n') {
      const c = source[i];
      if (c === '#' && (i === 0 || source[i - 1] === ' ' || source[i - 1] === '\t')) {
        while (i < n && source[i] !== '\n') i++;
        break;
      }
      if (valueStart && (c === '"' || c === "'")) {
        i++;
        while (i < n) {
          if (source[i] === '\n') line++;
          if (c === '"' && source[i] === '\\') {
            i += 2;
            continue;
          }
          if (source[i] === c) {
            if (c === "'" && source[i + 1] === "'") {
              i += 2;
              continue;
            }
            break;
          }
          i++;
        }
        i++;
        valueStart = false;
        continue;
      }
      if ((valueStart || depth > 0) && (c === '[' || c === '{')) {
        depth++;
        if (depth > MAX_FLOW_DEPTH) {
          return { line, column: i - source.lastIndexOf('\n', i - 1), message: TOO_NESTED };
        }
        i++;
        valueStart = true;
        continue;
      }
      if (depth > 0 && (c === ']' || c === '}')) depth--;
      if (valueStart && depth === 0 && (c === '|' || c === '>')) {
        blockScalarIndent = indent;
      }
      if (c === ' ' || c === '\t') {
        i++;
        continue;
      }
      const next = source[i + 1];
      const sepNext = next === undefined || next === ' ' || next === '\t' || next === '\n' || next === '\r';
      valueStart = ((c === ':' || c === '-' || c === '?') && sepNext) || (depth > 0 && c === ',');
      i++;
    }
    i++;
    line++;
  }
  return null;
}

interface Walk {
  doc: Document;
  lc: LineCounter;
  positions: Map<string, Pos>;
  nodes: number;
  aliases: number;
  fail: string | null;
}

function posOf(w: Walk, node: unknown): Pos | null {
  const offset = (node as { range?: number[] } | null | undefined)?.range?.[0];
  if (typeof offset !== 'number') return null;
  const lp = w.lc.linePos(offset);
  return { line: lp.line, column: lp.col };
}

function setPos(w: Walk, path: string, pos: Pos | null, record: boolean): void {
  if (record && pos && !w.positions.has(path)) w.positions.set(path, pos);
}

function convert(w: Walk, node: unknown, path: string, depth: number, record: boolean): unknown {
  if (w.fail) return null;
  if (++w.nodes > MAX_NODES) {
    w.fail = `the document has more than ${MAX_NODES} values`;
    return null;
  }
  if (depth > MAX_VALUE_DEPTH) {
    w.fail = `values are nested more than ${MAX_VALUE_DEPTH} levels deep`;
    return null;
  }
  if (node === null || node === undefined) return null;
  if (isAlias(node)) {
    if (++w.aliases > MAX_ALIASES) {
      w.fail = `the document uses more than ${MAX_ALIASES} aliases`;
      return null;
    }
    const target = node.resolve(w.doc);
    return target ? convert(w, target, path, depth + 1, false) : null;
  }
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'bigint') return Number(v);
    if (v instanceof Uint8Array) return null;
    return v;
  }
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const keyNode = pair.key as Node | null;
      let key: string;
      if (keyNode === null || keyNode === undefined) key = '';
      else if (isScalar(keyNode)) key = String(keyNode.value);
      else {
        w.fail = 'a mapping key is not a plain value';
        return null;
      }
      const childPath = joinKey(path, key);
      setPos(w, childPath, posOf(w, keyNode), record);
      setOwn(out, key, convert(w, pair.value, childPath, depth + 1, record));
    }
    return out;
  }
  if (isSeq(node)) {
    const out: unknown[] = [];
    node.items.forEach((item, i) => {
      const childPath = joinIndex(path, i);
      setPos(w, childPath, posOf(w, item), record);
      out.push(convert(w, item, childPath, depth + 1, record));
    });
    return out;
  }
  return null;
}

/** Parses every document; reports YAML errors on the sink. Never throws. */
export function parseSource(source: string, sink: ErrorSink): ParsedDocument[] {
  const tooLarge =
    source.length > MAX_SOURCE_BYTES
      ? {
          line: 1,
          column: 1,
          message: `The source is ${source.length} characters long; the limit is ${MAX_SOURCE_BYTES}. Split it into several deployments.`,
        }
      : scanNesting(source);
  if (tooLarge) {
    sink.add(APL.YAML_TOO_LARGE, -1, '', tooLarge.message, tooLarge);
    return [];
  }
  const lc = new LineCounter();
  const docs = parseAllDocuments(source, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const out: ParsedDocument[] = [];
  docs.forEach((doc, index) => {
    const w: Walk = { doc, lc, positions: new Map(), nodes: 0, aliases: 0, fail: null };
    const broken = doc.errors.length > 0;
    for (const e of doc.errors) {
      const { line, col } = lc.linePos(Array.isArray(e.pos) ? e.pos[0] : 0);
      const first = String(e.message)
        .split('\n')[0]
        .replace(/ at line \d+, column \d+:?$/, '');
      const message = `YAML syntax error: ${first}. Fix the YAML at this line.`;
      sink.add(APL.YAML_SYNTAX, index, '', message, { line, column: col });
    }
    w.positions.set('', posOf(w, doc.contents) ?? { line: lc.linePos(doc.range?.[0] ?? 0).line, column: 1 });
    sink.positions.set(index, w.positions);
    if (broken) {
      out.push({ index, value: null, broken: true, salvage: salvage(doc) });
      return;
    }
    const value = convert(w, doc.contents, '', 0, true);
    if (w.fail) {
      sink.add(APL.YAML_TOO_LARGE, index, '', `The document is too complex: ${w.fail}. Simplify it.`);
      out.push({ index, value: null, broken: true });
      return;
    }
    out.push({ index, value, broken: false });
  });
  return out;
}
